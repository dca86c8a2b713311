"""Exactly-once writes from `foreachBatch`: Delta commits each micro-batch at most once.

After a crash between a batch's write and its checkpoint commit, Spark runs the batch again with
the same id. Each commit records which query wrote it and which batch it holds (batch_marks.py);
a batch already recorded is skipped. The query is the checkpoint's query id, which survives
restarts from that checkpoint and changes when the checkpoint is replaced, so a new checkpoint
starting again at batch 0 is not mistaken for a replay and silently ignored.

MERGEs carry Delta's own transaction id (txnAppId, txnVersion). Appends carry a mark in the
commit's userMetadata instead: Delta checks its transaction id against the table's whole state,
which it rebuilds for that on every commit (0.9 s a commit on 2 cores where the append alone
takes 0.2 s: bench/latency/append_commit.py). Only the first batch a query runs can be a replay (Spark
re-runs a batch only when a query starts from a checkpoint that planned it), so appends read the
log back once per query start instead.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Callable, Iterator

from py4j.protocol import Py4JJavaError
from pyspark.errors.exceptions.captured import CapturedException
from pyspark.sql import DataFrame, SparkSession

from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.writes import commit_faults
from dbt_spark_streaming.writes.batch_marks import batch_mark, recorded_batch

# Delta's session settings for idempotent MERGE / UPDATE / DELETE / INSERT statements.
TXN_APP_ID = "spark.databricks.delta.write.txnAppId"
TXN_VERSION = "spark.databricks.delta.write.txnVersion"

BatchWriter = Callable[[DataFrame, int, str], None]  # (batch, batch id, app id)


def checkpoint_app_id(spark: SparkSession, checkpoint: str) -> str:
    """The query id Spark keeps in the checkpoint's metadata file."""
    metadata = hadoop_fs.read_text(spark, checkpoint.rstrip("/") + "/metadata")
    return json.loads(metadata.splitlines()[0])["id"]


def once_per_batch(checkpoint: str, write: BatchWriter) -> Callable[[DataFrame, int], None]:
    """A foreachBatch function that hands `write` the app id tied to the query's checkpoint."""
    app_id: list[str] = []

    def write_batch(batch: DataFrame, batch_id: int) -> None:
        if not app_id:  # the metadata file exists once the query has started
            app_id.append(checkpoint_app_id(batch.sparkSession, checkpoint))
        write(batch, batch_id, app_id[0])

    return raising_spark_errors(write_batch)


def last_committed_batch(
    spark: SparkSession, log_path: str, latest_version: int, app_id: str
) -> int:
    """The last batch the query `app_id` committed to the table, -1 if none.

    Reads the log's commit files back from the latest. One query writes a table at a time, so the
    first commit of any streaming query ends the search: if it is not this query's, this query
    (its checkpoint newer) has not committed yet. Commits of other kinds (OPTIMIZE, ALTER) are
    passed over. A commit file already cleaned up ends it too.
    """
    for version in range(latest_version, -1, -1):
        commit_file = f"{log_path.rstrip('/')}/{version:020d}.json"
        if not hadoop_fs.exists(spark, commit_file):
            return -1
        recorded = recorded_batch(hadoop_fs.read_text(spark, commit_file))
        if recorded is not None:
            query, batch = recorded
            return batch if query == app_id else -1
    return -1


def appending_once(
    checkpoint: str, location: str, merge_schema: bool = False
) -> Callable[[DataFrame, int], None]:
    """The foreachBatch function of an append-mode model: each batch appended once to the Delta
    table at `location`, its commit marked with the query and batch."""
    committed: list[int] = []  # the query's last committed batch, read when it starts

    def append_batch(batch: DataFrame, batch_id: int, app_id: str) -> None:
        session = batch.sparkSession
        if not committed:
            log_folder, latest_version = delta_tables.log_folder_and_version(session, location)
            committed.append(last_committed_batch(session, log_folder, latest_version, app_id))
        if batch_id <= committed[0]:
            return  # replayed after a crash: the table already holds it
        writer = (
            batch.write.format("delta").mode("append")
            .option("userMetadata", batch_mark(app_id, batch_id))
        )
        if merge_schema:
            writer = writer.option("mergeSchema", "true")
        writer.save(location)
        committed[0] = batch_id
        commit_faults.committed(location)

    return once_per_batch(checkpoint, append_batch)


# A complete-mode batch rewrites the whole result: Delta's optimised write bin-packs it into files
# of up to 512 MB, instead of a file per shuffle partition (up to Spark's default 200 a batch),
# each of which becomes a tombstone at the next batch. A small aggregate is one file a batch;
# the soak's gold table went from 4 files a commit to 1 (docs/BENCHMARKS.md section 7).
REWRITE_BIN_PACKED = ("optimizeWrite", "true")


def overwriting_once(
    checkpoint: str, location: str, merge_schema: bool = False
) -> Callable[[DataFrame, int], None]:
    """The foreachBatch function of a complete-mode model written batch by batch (with a
    quarantine beside it): each batch's whole result replaces the table's, under Delta's
    transaction id, so a replayed batch changes nothing. One commit a batch of an aggregate's
    result: the state rebuild Delta's check costs is small next to it."""

    def overwrite_batch(batch: DataFrame, batch_id: int, app_id: str) -> None:
        writer = (
            batch.write.format("delta").mode("overwrite")
            .option("txnAppId", app_id).option("txnVersion", batch_id)
            .option(*REWRITE_BIN_PACKED)
        )
        if merge_schema:
            writer = writer.option("mergeSchema", "true")
        writer.save(location)
        commit_faults.committed(location)

    return once_per_batch(checkpoint, overwrite_batch)


def raising_spark_errors(function: Callable[[DataFrame, int], None]) -> Callable[[DataFrame, int], None]:
    """A foreachBatch function whose Spark errors reach the query as the JVM's own exception (with
    the gateway set up by session.py), so that it fails as it would with a built-in sink."""

    def call(batch: DataFrame, batch_id: int) -> None:
        try:
            function(batch, batch_id)
        except CapturedException as error:
            if getattr(error, "_origin", None) is None:
                raise
            raise Py4JJavaError("foreachBatch", error._origin) from None

    return call


@contextmanager
def delta_transaction(spark: SparkSession, app_id: str, batch_id: int) -> Iterator[None]:
    """SQL statements (MERGE, UPDATE, DELETE) inside are skipped if this batch was committed.

    Set on the batch's own session (foreachBatch gives each query a session of its own), and
    unset afterwards so that no later statement inherits them.
    """
    spark.conf.set(TXN_APP_ID, app_id)
    spark.conf.set(TXN_VERSION, str(batch_id))
    try:
        yield
    finally:
        spark.conf.unset(TXN_APP_ID)
        spark.conf.unset(TXN_VERSION)
