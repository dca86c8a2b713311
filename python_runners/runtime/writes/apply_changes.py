"""A cdc_table model's foreachBatch: each micro-batch of the change feed applied to the table as
SCD type 1 (scd1.py) or type 2 (scd2.py), under the batch's Delta transaction id."""

from __future__ import annotations

from functools import partial

from pyspark.sql import DataFrame, SparkSession

from python_runners.runtime import delta_tables
from python_runners.runtime.writes.change_rows import FeedShape, change_rows
from python_runners.runtime.writes.idempotent_batches import delta_transaction, once_per_batch
from python_runners.runtime.writes.merge import release, source_already_materialized
from python_runners.runtime.writes.scd1 import apply_scd1
from python_runners.runtime.writes.scd2 import apply_scd2


def create_tables_if_missing(
    spark: SparkSession, shape: FeedShape, table: str, partition_by, properties, exists: bool
) -> None:
    """The model's table (its stored columns, and scd2's validity) and its tombstones."""
    delta_tables.create_if_missing(
        spark, table, shape.table_schema(), partition_by, properties, exists=exists
    )
    delta_tables.create_if_missing(spark, shape.changes.tombstones_table(table), shape.tombstones_schema())


def apply_change_batch(batch: DataFrame, batch_id: int, app_id: str, table: str, shape: FeedShape) -> None:
    """One micro-batch of the feed applied; a replay of a committed batch changes nothing."""
    session = batch.sparkSession
    changes = change_rows(batch, shape, batch_id)
    used = [changes.rows]
    try:
        if changes.changes == 0:
            return
        apply = apply_scd1 if shape.changes.stored_as == "scd1" else apply_scd2
        with delta_transaction(session, app_id, batch_id), source_already_materialized(session):
            used = apply(changes, shape, table, app_id, batch_id)
    finally:
        for frame in used:
            release(frame)


def applying_changes(checkpoint: str, table: str, shape: FeedShape):
    """The foreachBatch function of a cdc_table model."""
    return once_per_batch(checkpoint, partial(apply_change_batch, table=table, shape=shape))
