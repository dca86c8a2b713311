"""The progress table: one row per micro-batch of every streaming query, queryable with SQL.

`select * from <schema>._stream_progress` (`default._stream_progress` unless set: a dbt run
names its target schema's, the adapter's connections.py; env `STREAM_PROGRESS_TABLE` names
another). Rows older than `STREAM_PROGRESS_RETENTION_DAYS` (default
7) are deleted at most once a day (by the first process that writes the table after a day), so
the table stays bounded.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Optional

from pyspark.sql import SparkSession, functions

from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.progress import batch_notes
from dbt_spark_streaming.progress.batch import BatchProgress, model_of
from dbt_spark_streaming.session import committing

TABLE_VARIABLE = "STREAM_PROGRESS_TABLE"
RETENTION_VARIABLE = "STREAM_PROGRESS_RETENTION_DAYS"
DEFAULT_TABLE = "default._stream_progress"
DEFAULT_RETENTION_DAYS = 7
RETENTION_MARKER = "_retention_applied_at"
RETENTION_EVERY_SECONDS = 86_400

# The expectations' counts (null for a model without expectations): rows checked, rows left out
# by drop rules, rows quarantined, and per expectation its action and failures. Per expectation,
# in SQL: select model, batch_id, e.* from _stream_progress lateral view explode(expectations) as e
EXPECTATION = "struct<name: string, action: string, rows_checked: bigint, rows_failed: bigint>"
COLUMNS = (
    ("query_name", "string"), ("model", "string"), ("query_id", "string"), ("run_id", "string"),
    ("batch_id", "bigint"), ("batch_timestamp", "timestamp"), ("num_input_rows", "bigint"),
    ("input_rows_per_second", "double"), ("processed_rows_per_second", "double"),
    ("batch_duration_ms", "bigint"), ("watermark", "timestamp"),
    ("rows_dropped_by_watermark", "bigint"), ("state_rows", "bigint"),
    ("progress_json", "string"), ("recorded_at", "timestamp"),
    ("rows_checked_by_expectations", "bigint"), ("rows_dropped_by_expectations", "bigint"),
    ("rows_quarantined_by_expectations", "bigint"), ("expectations", f"array<{EXPECTATION}>"),
    # a cdc_table's batch: changes a tie on sequence_by left out (null for other models)
    (batch_notes.CDC_CHANGES_TIED, "bigint"),
    # true: no batch, the model had nothing new since batch_id and started no query
    # (lifecycle/up_to_date.py), said once per batch_id; batch_duration_ms is then how long
    # finding that out took
    ("up_to_date", "boolean"),
    # an on_new_data model served by the dataflow scheduler (null for others): seconds from the
    # oldest input change the batch took to its end, and the model's target_lag
    ("lag_seconds", "double"), ("target_lag_seconds", "double"),
    # rows with a corrupt-record column set that entered the batch's query (null: it observes
    # none; writes/unreadable_counts.py)
    ("unreadable_lines", "bigint"),
)
SCHEMA = ", ".join(f"{column} {kind}" for column, kind in COLUMNS)


def table_name(environ: Mapping[str, str] = os.environ) -> str:
    return environ.get(TABLE_VARIABLE) or DEFAULT_TABLE


def retention_days(environ: Mapping[str, str] = os.environ) -> float:
    value = environ.get(RETENTION_VARIABLE)
    if value is None:
        return DEFAULT_RETENTION_DAYS
    try:
        days = float(value)
    except ValueError:
        days = -1
    if days <= 0:
        raise ValueError(
            f"{RETENTION_VARIABLE} is {value!r}; give the number of days of stream progress to "
            f"keep, e.g. {DEFAULT_RETENTION_DAYS}."
        )
    return days


def table_location(lakehouse: Lakehouse, name: Optional[str] = None) -> str:
    """Where the managed table's files are: read them by path without the metastore (which an
    embedded Derby lets only one process open)."""
    schema, table = (name or table_name()).replace("`", "").split(".")
    if schema == "default":
        return f"{lakehouse.warehouse}/{table}"
    return f"{lakehouse.warehouse}/{schema}.db/{table}"


def progress_row(progress: Any, lag: Optional[tuple[float, Optional[float]]] = None) -> tuple:
    """One batch's progress (a BatchProgress, or what BatchProgress.from_progress reads) as a row
    of the table; `lag`: the served model's (lag, target_lag) in seconds as the batch ended."""
    batch = BatchProgress.from_progress(progress)
    return (
        batch.query_name,
        batch.model,
        batch.query_id,
        batch.run_id,
        batch.batch_id,
        batch.timestamp,
        batch.input_rows,
        batch.input_rows_per_second,
        batch.processed_rows_per_second,
        batch.duration_ms,
        batch.watermark,
        batch.late_rows,
        batch.state_rows,
        json.dumps(batch.raw, sort_keys=True),
        datetime.now(timezone.utc),
        *_expectation_columns(batch),
        batch_notes.of(batch.query_id, batch.batch_id, batch_notes.CDC_CHANGES_TIED),
        False,
        round(lag[0], 3) if lag else None,
        lag[1] if lag else None,
        sum(batch.unreadable_lines.values()) if batch.unreadable_lines else None,
    )


def up_to_date_row(query_name: str, batch_id: int, check_ms: int, inputs: Iterable[str]) -> tuple:
    """A model's run that found nothing new since `batch_id` and started no query."""
    now = datetime.now(timezone.utc)
    said = {"name": query_name, "batchId": batch_id, "upToDate": True, "inputs": list(inputs),
            "durationMs": {"upToDateCheck": check_ms}}
    return (query_name, model_of(query_name), None, None, batch_id, now, 0, None, None, check_ms, None, 0, None,
            json.dumps(said, sort_keys=True), now, None, None, None, None, None, True, None, None, None)


def _expectation_columns(batch: BatchProgress) -> tuple:
    counts = batch.expectations
    if not counts:
        return (None, None, None, None)
    return (
        counts.rows_checked,
        counts.rows_dropped,
        counts.rows_quarantined,
        [
            {"name": rule.name, "action": rule.action, "rows_checked": rule.rows_checked,
             "rows_failed": rule.rows_failed}
            for rule in counts.rules
        ],
    )


def append(spark: SparkSession, rows: Iterable[tuple], name: Optional[str] = None) -> int:
    """Rows travel as one JSON text parameter parsed in the JVM, not as a DataFrame built from
    Python objects: that one starts Python worker processes to unpickle them, seconds of CPU
    per flush that an always-on service takes from its streams. A table made before a column
    was added gets it (mergeSchema)."""
    rows = list(rows)
    if not rows:
        return 0
    columns = COLUMNS
    as_text = ", ".join(f"`{column}`: {'string' if kind == 'timestamp' else kind}" for column, kind in columns)
    parsed = functions.from_json(
        functions.lit(json.dumps([_json_row(row, columns) for row in rows])), f"array<struct<{as_text}>>"
    )
    frame = spark.range(1).select(functions.inline(parsed)).selectExpr(*(
        f"cast(`{column}` as timestamp) as `{column}`" if kind == "timestamp" else f"`{column}`"
        for column, kind in columns
    ))
    name = name or table_name()
    _schema_exists(spark, name)
    with committing(name):
        frame.write.format("delta").mode("append").option("mergeSchema", "true").saveAsTable(name)
    return len(rows)


_schemas_made: set[str] = set()


def _schema_exists(spark: SparkSession, name: str) -> None:
    """A target's schema may hold no model of its own (only its prefixed layers): made once."""
    schema = name.replace("`", "").rpartition(".")[0] or "default"
    if schema not in _schemas_made:
        spark.sql(f"create schema if not exists `{schema}`")
        _schemas_made.add(schema)


def _json_row(row: tuple, columns) -> dict:
    return {
        column: value.isoformat() if isinstance(value, datetime) else value
        for (column, _kind), value in zip(columns, row)
    }


def delete_older_than(spark: SparkSession, days: float, name: Optional[str] = None) -> bool:
    """Delete the rows older than `days`, at most once a day: a DELETE is a Spark job and a
    commit, seconds in a short command, and a day's rows are few. When it last ran is a marker
    file in the table's folder (a name Delta leaves alone). True if it ran."""
    name = name or table_name()
    if not spark.catalog.tableExists(name):
        return False
    marker = f"{delta_tables.location(spark, name)}/{RETENTION_MARKER}"
    now = time.time()
    if hadoop_fs.exists(spark, marker):
        try:
            if now - float(hadoop_fs.read_text(spark, marker)) < RETENTION_EVERY_SECONDS:
                return False
        except ValueError:
            pass  # unreadable: delete, and write it again
    spark.sql(
        f"delete from {name} where batch_timestamp < "
        f"current_timestamp() - make_dt_interval(0, 0, 0, {days * 86400})"
    )
    hadoop_fs.write_text(spark, marker, repr(now))
    return True
