"""Exactly-once writes from `foreachBatch`: Delta commits each micro-batch at most once.

After a crash between a batch's write and its checkpoint commit, Spark runs the batch again with
the same id. Delta skips a write whose transaction (txnAppId, txnVersion) it has already
committed. The version is the batch id; the app id is the checkpoint's query id, which survives
restarts from that checkpoint and changes when the checkpoint is replaced, so a new checkpoint
starting again at batch 0 is not mistaken for a replay and silently ignored.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Callable, Iterator

from pyspark.sql import DataFrame, SparkSession

from python_runners import hadoop_fs

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

    return write_batch


def append_once(batch: DataFrame, batch_id: int, app_id: str, table: str) -> None:
    (
        batch.write.format("delta").mode("append")
        .option("txnAppId", app_id).option("txnVersion", batch_id)
        .saveAsTable(table)
    )


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
