"""A model's streaming write into its Delta table: the query that writes it, started.

What runs around it (redeploys, the query-change policy, waiting for catch-up, serving) is the
coordinator's (run/model_run.py); this module only builds and starts queries.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType
from pyspark.sql.streaming import StreamingQuery
from py4j.protocol import Py4JJavaError

from dbt_spark_streaming.config.contracts import with_not_null
from dbt_spark_streaming.config.triggers import Trigger
from dbt_spark_streaming.delta import constraints as delta_constraints
from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.errors import StreamingError, StreamingModelError, explain
from dbt_spark_streaming.writes import batch_errors
from dbt_spark_streaming.writes.cdc.apply_changes import applying_changes, create_tables_if_missing
from dbt_spark_streaming.writes.cdc.change_rows import FeedShape
from dbt_spark_streaming.writes.expectation_checks import (
    checked, model_columns, quarantine_columns, splitting_quarantine,
)
from dbt_spark_streaming.writes.idempotent_batches import REWRITE_BIN_PACKED, appending_once, overwriting_once
from dbt_spark_streaming.writes.merge import merge_writer
from dbt_spark_streaming.writes.table_write import TableWrite


@dataclass(frozen=True)
class StreamingWrite(TableWrite):
    """A streaming_table or cdc_table model's write: its checked config, the table it writes and
    the temp view its query reads from."""

    source_view: str = ""
    inputs_key: str = ""  # what its query's inputs are remembered under (lifecycle/query_inputs.py)

    @property
    def trigger(self) -> Trigger:
        return self.config.trigger

    def with_trigger(self, trigger: Trigger) -> "StreamingWrite":
        return replace(self, config=replace(self.config, trigger=trigger))

    @property
    def query_name(self) -> str:
        return self.target_table

    @property
    def writes_through_delta_sink(self) -> bool:
        """Delta's own streaming sink, not a foreachBatch function of ours: a complete-mode
        model's whole result, with no quarantine beside it."""
        return self.config.changes is None and self.config.output_mode == "complete" and self.quarantine_table is None

    @property
    def recorded_on_table(self) -> dict[str, str]:
        """Table properties the write keeps up to date: what the docs show, what the query was."""
        query = self.config.query
        return {**self.config.documented(), **(query.properties() if query else {})}


def start_streaming_write(
    spark: SparkSession, write: StreamingWrite, table_exists: bool | None = None
) -> StreamingQuery:
    """Start the model's query, creating its table if it has none; `table_exists` when the
    caller already knows it."""
    if table_exists is None:
        table_exists = spark.catalog.tableExists(write.target_table)
    _refuse_running_twice(spark, write)
    frame = streaming_frame(spark, write)
    properties = {**write.config.tblproperties, **write.recorded_on_table}
    try:
        rows = model_columns(frame).schema
        if write.config.changes is None:
            delta_tables.create_if_missing(
                spark, write.target_table, with_not_null(rows, write.config.contract), write.config.partition_by,
                properties, exists=table_exists,
            )
        else:
            shape = FeedShape(write.config.changes, with_not_null(rows, write.config.contract))
            create_tables_if_missing(
                spark, shape, write.target_table, write.config.partition_by, properties, table_exists
            )
        delta_constraints.add_missing(spark, write.target_table, write.config.contract)
        writer = (
            frame.writeStream.queryName(write.query_name)
            .outputMode(write.config.output_mode)
            .option("checkpointLocation", write.checkpoint)
            .trigger(**write.trigger.writer_kwargs())
        )
        if write.writes_through_delta_sink:
            if write.config.append_new_columns:
                writer = writer.option("mergeSchema", "true")
            return writer.format("delta").option(*REWRITE_BIN_PACKED).toTable(write.target_table)
        each_batch = _batch_writer(spark, write, rows)
        if write.quarantine_table is not None:
            each_batch = splitting_quarantine(
                each_batch, _quarantine_writer(spark, write, frame),
                replaces_quarantine=_replaces_quarantine(write),
            )
        batch_errors.forget(write.checkpoint)
        return writer.foreachBatch(batch_errors.kept_for(write.checkpoint, each_batch)).start()
    except (PySparkException, Py4JJavaError) as error:
        raise explain(write.model, error) from None


def streaming_frame(spark: SparkSession, write: StreamingWrite) -> DataFrame:
    """What the model's query streams into its sink: its view, deduplicated and with its
    expectations' checks as its settings say."""
    frame = spark.table(write.source_view)
    if write.config.dedupe is not None:
        frame = write.config.dedupe.apply(frame)
    return checked(frame, write.config.expectations)


def failure(write: StreamingWrite, error: BaseException) -> StreamingError:
    """Why the model's query failed (writes/batch_errors.py)."""
    return batch_errors.failure(write.model, write.checkpoint, error)


def _batch_writer(spark: SparkSession, write: StreamingWrite, rows: StructType):
    """The foreachBatch function that writes a batch (of `rows`) into the model's table, once."""
    if write.config.changes is not None:
        return applying_changes(write.checkpoint, write.target_table, FeedShape(write.config.changes, rows))
    if write.config.output_mode == "update":
        return merge_writer(write.checkpoint, write.target_table, write.config.unique_key)
    location = delta_tables.location(spark, write.target_table)
    if write.config.output_mode == "complete":
        return overwriting_once(write.checkpoint, location, merge_schema=write.config.append_new_columns)
    return appending_once(write.checkpoint, location, merge_schema=write.config.append_new_columns)


def _quarantine_writer(spark: SparkSession, write: StreamingWrite, frame: DataFrame):
    """Quarantined rows are appended once per batch; in complete mode, where the model's table
    is the whole result again each batch, the quarantine holds the current result's rows."""
    table = write.quarantine_table
    delta_tables.create_if_missing(spark, table, quarantine_columns(frame).schema, (), {})
    location = delta_tables.location(spark, table)
    if _replaces_quarantine(write):
        return overwriting_once(write.checkpoint, location, merge_schema=True)
    return appending_once(write.checkpoint, location, merge_schema=True)


def _replaces_quarantine(write: StreamingWrite) -> bool:
    return write.config.changes is None and write.config.output_mode == "complete"


def _refuse_running_twice(spark: SparkSession, write: StreamingWrite) -> None:
    for active in spark.streams.active:
        if active.name == write.query_name:
            raise StreamingModelError(
                f"Model {write.model}: a streaming query writing {write.target_table} is already "
                f"running in this process (id {active.id}). Stop it before starting another."
            )
