"""The progress table: one row per micro-batch of every streaming query, queryable with SQL.

`select * from _stream_progress` (the default table, `default._stream_progress`; env
`STREAM_PROGRESS_TABLE` names another). Rows older than `STREAM_PROGRESS_RETENTION_DAYS` (default
7) are deleted once per process, so the table stays bounded.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Optional

from pyspark.sql import SparkSession, functions

from python_runners.runtime.lakehouse import Lakehouse

TABLE_VARIABLE = "STREAM_PROGRESS_TABLE"
RETENTION_VARIABLE = "STREAM_PROGRESS_RETENTION_DAYS"
DEFAULT_TABLE = "default._stream_progress"
DEFAULT_RETENTION_DAYS = 7

SCHEMA = (
    "query_name string, model string, query_id string, run_id string, batch_id bigint, "
    "batch_timestamp timestamp, num_input_rows bigint, input_rows_per_second double, "
    "processed_rows_per_second double, batch_duration_ms bigint, watermark timestamp, "
    "rows_dropped_by_watermark bigint, state_rows bigint, progress_json string, "
    "recorded_at timestamp"
)


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


def ran_a_batch(progress: Mapping[str, Any]) -> bool:
    """Spark also reports triggers that found no new data (every 10 s while idle); those are not
    batches."""
    return progress.get("batchId") is not None and "addBatch" in (progress.get("durationMs") or {})


def last_batch(query: Any) -> Optional[dict]:
    """The progress of the query's latest batch that ran (its lastProgress may be an idle trigger's)."""
    batches = [p for p in query.recentProgress or [] if ran_a_batch(p)]
    return batches[-1] if batches else None


def progress_row(progress: Mapping[str, Any]) -> tuple:
    """One progress event (StreamingQueryProgress as JSON) as a row of the table."""
    name = progress.get("name") or ""
    watermark = (progress.get("eventTime") or {}).get("watermark")
    operators = progress.get("stateOperators") or []
    return (
        name,
        name.replace("`", "").split(".")[-1],
        progress.get("id"),
        progress.get("runId"),
        int(progress["batchId"]),
        _timestamp(progress.get("timestamp")),
        int(progress.get("numInputRows") or 0),
        _float(progress.get("inputRowsPerSecond")),
        _float(progress.get("processedRowsPerSecond")),
        int((progress.get("durationMs") or {}).get("triggerExecution") or 0),
        _timestamp(watermark),
        sum(int(op.get("numRowsDroppedByWatermark") or 0) for op in operators),
        sum(int(op.get("numRowsTotal") or 0) for op in operators),
        json.dumps(progress, sort_keys=True),
        datetime.now(timezone.utc),
    )


def append(spark: SparkSession, rows: Iterable[tuple], name: Optional[str] = None) -> int:
    """Rows travel as one JSON text parameter parsed in the JVM, not as a DataFrame built from
    Python objects: that one starts Python worker processes to unpickle them, seconds of CPU
    per flush that an always-on service takes from its streams."""
    rows = list(rows)
    if not rows:
        return 0
    columns = [column.split() for column in SCHEMA.split(",")]
    as_text = ", ".join(f"`{column}`: {'string' if kind == 'timestamp' else kind}" for column, kind in columns)
    parsed = functions.from_json(
        functions.lit(json.dumps([_json_row(row, columns) for row in rows])), f"array<struct<{as_text}>>"
    )
    frame = spark.range(1).select(functions.inline(parsed)).selectExpr(*(
        f"cast(`{column}` as timestamp) as `{column}`" if kind == "timestamp" else f"`{column}`"
        for column, kind in columns
    ))
    frame.write.format("delta").mode("append").saveAsTable(name or table_name())
    return len(rows)


def _json_row(row: tuple, columns: list[list[str]]) -> dict:
    return {
        column: value.isoformat() if isinstance(value, datetime) else value
        for (column, _kind), value in zip(columns, row)
    }


def delete_older_than(spark: SparkSession, days: float, name: Optional[str] = None) -> None:
    name = name or table_name()
    if spark.catalog.tableExists(name):
        spark.sql(
            f"delete from {name} where batch_timestamp < "
            f"current_timestamp() - make_dt_interval(0, 0, 0, {days * 86400})"
        )


def _timestamp(text: Optional[str]) -> Optional[datetime]:
    """Spark's progress times are UTC ISO-8601 ('2026-11-22T10:00:00.123Z'); kept time-zone aware
    so that the Python process's own zone plays no part."""
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _float(value: Any) -> Optional[float]:
    if value is None:
        return None
    number = float(value)
    return None if number != number else number  # NaN (no time elapsed) -> null
