"""The queries that keep a model's unreadable lines, beside the model's own query.

sources/corrupt_lines.py finds, when a model's query is created, the json/csv sources whose
unreadable lines the model does not see. For each, a query of its own streams those lines into
`<model table>__corrupt_lines`, with the model's trigger: in each run it catches up right after
the model's own query, and it is served along with the model's when that one is (both by the
coordinator, run/model_run.py). Each has its own
checkpoint (`<model checkpoint>__corrupt_lines/<source>`), so it reads each file once, whatever
the model's query does; a full refresh of the model removes both with the model's.

Several of these queries (a model reading two such sources) append to the one table, so each
batch is appended under Delta's transaction id (the query's id and the batch): a batch run again
after a crash is not appended twice. A batch without an unreadable line writes nothing: a run
whose lines could all be read commits nothing there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import StructField, StructType

from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.errors import StreamingModelError, explain
from dbt_spark_streaming.sources.corrupt_lines import CorruptLines, checkpoint_of, table_of
from dbt_spark_streaming.config.triggers import Trigger
from dbt_spark_streaming.writes import batch_errors
from dbt_spark_streaming.writes.idempotent_batches import once_per_batch
from dbt_spark_streaming.writes.streaming import StreamingWrite


@dataclass(frozen=True)
class CorruptLinesWrite:
    """One source's unreadable lines streamed into the model's quarantine of them. Named as a
    model's write is (model, checkpoint, query_name), for the serving loop and error reports."""

    model: str
    lines: CorruptLines
    model_table: str
    model_checkpoint: str
    trigger: Trigger

    @classmethod
    def beside(cls, write: StreamingWrite, lines: CorruptLines) -> "CorruptLinesWrite":
        return cls(write.model, lines, write.target_table, write.checkpoint, write.trigger)

    @property
    def target_table(self) -> str:
        return table_of(self.model_table)

    @property
    def checkpoint(self) -> str:
        return f"{checkpoint_of(self.model_checkpoint)}/{self.lines.source}"

    @property
    def query_name(self) -> str:
        return f"{self.target_table}:{self.lines.source}"

    def start(self, spark: SparkSession, trigger: Optional[Trigger] = None) -> StreamingQuery:
        """Start the query (with the model's trigger unless given another)."""
        if any(active.name == self.query_name for active in spark.streams.active):
            raise StreamingModelError(
                f"Model {self.model}: a streaming query writing the unreadable lines of "
                f"{self.lines.source} to {self.target_table} is already running in this process."
            )
        frame = self.lines.frame(spark)
        try:
            delta_tables.create_if_missing(spark, self.target_table, _nullable(frame.schema))
            each_batch = appending_lines_once(self.checkpoint, delta_tables.location(spark, self.target_table))
            batch_errors.forget(self.checkpoint)
            return (
                frame.writeStream.queryName(self.query_name)
                .outputMode("append")
                .option("checkpointLocation", self.checkpoint)
                .trigger(**(trigger or self.trigger).writer_kwargs())
                .foreachBatch(batch_errors.kept_for(self.checkpoint, each_batch))
                .start()
            )
        except (PySparkException, Py4JJavaError) as error:
            raise explain(self.model, error) from None


def appending_lines_once(checkpoint: str, location: str):
    """The foreachBatch function: a batch's unreadable lines appended once, none when it has none."""

    def append(batch: DataFrame, batch_id: int, app_id: str) -> None:
        if batch.isEmpty():
            return
        (batch.write.format("delta").mode("append")
         .option("txnAppId", app_id).option("txnVersion", batch_id).save(location))

    return once_per_batch(checkpoint, append)


def said(count: int, table: str) -> str:
    """What the model's run line adds; nothing when no line was unreadable."""
    if not count:
        return ""
    return f", {count} unreadable line{'' if count == 1 else 's'} quarantined to {table}"


def _nullable(schema: StructType) -> StructType:
    return StructType([StructField(field.name, field.dataType, True) for field in schema.fields])
