"""Backfills: historical data appended once to an append-mode streaming table, by the model's SQL.

Each backfill (config in runtime/config/backfills.py) runs the model's compiled SQL as a batch query
with its one streaming input (a `source()` stream view or a `stream(<table>)`) replaced by a
view over the historical data, conformed to the input's schema (backfill_history.py): the
history gets the same columns, cleaning, dedupe, contract and expectations as streamed rows.
The rows are appended under a Delta transaction (txnAppId `backfill:<name>`, txnVersion 1 + the
table's generation: how often a full refresh emptied it in place), which Delta keeps in the
table's state (its log checkpoints too, with no expiry unless `delta.setTransactionRetentionDuration`
is set): a later run finds it there and skips the backfill, and a second write of it, should one
ever race, is skipped by Delta itself. The model's streaming checkpoint is neither read nor
written; its query does not see the historical data, and the historical data is not deduplicated
against what the stream wrote.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql.types import StructType

from dbt_spark_streaming.delta import constraints as delta_constraints
from dbt_spark_streaming.delta import log as delta_log
from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.config.backfills import Backfill
from dbt_spark_streaming.errors import StreamingModelError, explain
from dbt_spark_streaming.config.expectations import ExpectationCounts, expectations_said
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.config.model import ModelConfig
from dbt_spark_streaming.session import claim_lakehouse_for
from dbt_spark_streaming.config.stream_reads import (
    SOURCE_VIEW, TABLE, StreamRead, source_view_name, stream_reads,
)
from dbt_spark_streaming.config.sources import StreamSource
from dbt_spark_streaming.writes.backfill_history import historical_frame
from dbt_spark_streaming.writes.expectation_checks import (
    check_rules, checked, kept_rows, quarantined_rows,
)

TXN_VERSION = 1


@dataclass(frozen=True)
class BackfillOutcome:
    name: str
    rows: int = 0
    applied_before: bool = False
    expectations: ExpectationCounts = ExpectationCounts()

    def said(self) -> str:
        if self.applied_before:
            return f"backfill {self.name}: already applied"
        rows = "1 row" if self.rows == 1 else f"{self.rows} rows"
        return f"backfill {self.name}: {rows} appended{expectations_said(self.expectations)}"


def backfills_said(outcomes: list[BackfillOutcome]) -> str:
    """What the run output adds after the stream's summary, '' without backfills."""
    return "".join(f"; {outcome.said()}" for outcome in outcomes)


def run_backfills(
    spark: SparkSession, config: ModelConfig, sql: str, target_table: str,
    lakehouse: Optional[Lakehouse] = None,
) -> list[BackfillOutcome]:
    """Each of the model's backfills appended to its (existing) table once; the ones applied
    before are skipped without reading their data."""
    if not config.backfills:
        return []
    lakehouse = lakehouse or Lakehouse.from_env()
    location = delta_tables.location(spark, target_table)
    return [
        _run_backfill(spark, config, backfill, sql, target_table, location, lakehouse)
        for backfill in config.backfills
    ]


def _run_backfill(
    spark: SparkSession, config: ModelConfig, backfill: Backfill, sql: str, target_table: str,
    location: str, lakehouse: Lakehouse,
) -> BackfillOutcome:
    where = f"Model {config.model}: backfill {backfill.name}"
    txn_version, applied = _transaction(spark, location, backfill.app_id)
    if applied:
        return BackfillOutcome(backfill.name, applied_before=True)
    read = _the_streaming_input(where, sql)
    counts = ExpectationCounts()
    kept = None
    try:
        input_name, input_schema, source = _input(spark, config, read)
        history = historical_frame(spark, where, backfill, input_name, input_schema, source, lakehouse)
        view = f"{config.model}__backfill_{backfill.name}"
        history.createOrReplaceTempView(view)
        frame = spark.sql(sql[:read.start] + view + sql[read.end:])
        if config.dedupe is not None:
            frame = config.dedupe.apply(frame)  # a batch: duplicates within the history dropped
        delta_constraints.check_query(spark, config.contract, frame.schema)
        claim_lakehouse_for(config.model, target_table)
        if config.expectations:
            check_rules(frame, config.expectations)
            observation = Observation(f"backfill_{backfill.name}")
            kept = checked(frame, config.expectations, observation).persist()
            kept.count()  # the query and its rules, once (a fail rule raises here)
            counts = ExpectationCounts.from_metrics(observation.get)
            quarantine = config.expectations.quarantine_table(target_table)
            if quarantine is not None:
                rows = quarantined_rows(kept)
                delta_tables.create_if_missing(spark, quarantine, rows.schema)
                _append(rows, quarantine, backfill, txn_version, merge_schema=True)
            frame = kept_rows(kept)
        before = delta_tables.log_folder_and_version(spark, location)[1]
        _append(frame, target_table, backfill, txn_version, merge_schema=config.append_new_columns)
    except (PySparkException, Py4JJavaError) as error:
        raise explain(config.model, error) from None
    finally:
        if kept is not None:
            kept.unpersist()
    return BackfillOutcome(backfill.name, rows=_rows_appended(spark, location, before, backfill), expectations=counts)


def _transaction(spark: SparkSession, location: str, app_id: str) -> tuple[int, bool]:
    """The Delta transaction version a backfill writes under in the table at `location`, and
    whether the table records it already: from its current state, read once (no data read).
    Once per generation of the table: emptied in place by a full refresh, it gets them again."""
    generation, found = delta_log.property_and_transaction(spark, location, delta_tables.GENERATION, app_id)
    txn_version = TXN_VERSION + (int(generation) if generation is not None else 0)
    return txn_version, found is not None and found >= txn_version


def _the_streaming_input(where: str, sql: str) -> StreamRead:
    """The model's one streaming input in its compiled SQL: a stream(<table>) (with its options,
    as stream_changes renders it) or the source view of a meta.stream source."""
    reads = [read for read in stream_reads(sql) if read.kind in (TABLE, SOURCE_VIEW)]
    named = list(dict.fromkeys(_input_text(read) for read in reads))
    if len(named) != 1:
        raise StreamingModelError(
            f"{where}: a backfill runs the model's SQL with its streaming input replaced by the "
            f"historical data, so the model must read exactly one stream; it reads "
            f"{', '.join(named) or 'none'}. Backfill the upstream model that reads the stream "
            "instead, or split the model."
        )
    if len(reads) > 1:  # one stream named twice (a self-join): each mention is the history
        raise StreamingModelError(
            f"{where}: the model reads its stream {named[0]} more than once; a backfill replaces "
            "one streaming input. Read it once (a CTE) and refer to the CTE."
        )
    return reads[0]


def _input_text(read: StreamRead) -> str:
    return (read.relation if read.kind == SOURCE_VIEW else f"stream({read.relation})").lower()


def _input(
    spark: SparkSession, config: ModelConfig, read: StreamRead
) -> tuple[str, StructType, Optional[StreamSource]]:
    """The replaced input's name, schema (as the model's SQL sees it) and source, if a file one."""
    if read.kind == TABLE:
        return read.relation, spark.table(read.relation).schema, None
    view = read.relation
    source = next(
        (each.source for each in config.sources if source_view_name(each.name).lower() == view.lower()), None
    )
    return (source.name if source else view), spark.table(view).schema, source


def _marker(backfill: Backfill) -> str:
    return json.dumps({"backfill": backfill.name})


def _append(frame: DataFrame, table: str, backfill: Backfill, txn_version: int, merge_schema: bool) -> None:
    """The backfill's rows into `table` in one commit under its Delta transaction (Delta keeps
    a table's transactions apart, so the quarantine and the table take the same id)."""
    writer = (
        frame.write.format("delta").mode("append")
        .option("txnAppId", backfill.app_id).option("txnVersion", txn_version)
        .option("userMetadata", _marker(backfill))
    )
    if merge_schema:
        writer = writer.option("mergeSchema", "true")
    writer.saveAsTable(table)


def _rows_appended(spark: SparkSession, location: str, version: int, backfill: Backfill) -> int:
    """Rows of the backfill's commit after `version` (0 when Delta skipped it as applied)."""
    return sum(int(commit.get("operationMetrics", {}).get("numOutputRows", 0))
               for commit in delta_tables.commit_infos_since(spark, delta_log.at_path(spark, location), version)
               if commit.get("userMetadata") == _marker(backfill))
