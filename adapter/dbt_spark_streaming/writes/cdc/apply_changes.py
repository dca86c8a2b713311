"""A cdc_table model's foreachBatch: each micro-batch of the change feed applied to the table as
SCD type 1 (scd1.py) or type 2 (scd2.py), under the batch's Delta transaction id."""

from __future__ import annotations

from typing import Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.config.cdc import ApplyChanges, table_properties
from dbt_spark_streaming.progress import batch_notes
from dbt_spark_streaming.progress.batch import batches_of
from dbt_spark_streaming.writes.cdc import sequence_ties
from dbt_spark_streaming.writes.cdc.change_rows import FeedShape, change_rows
from dbt_spark_streaming.writes.idempotent_batches import delta_transaction, once_per_batch
from dbt_spark_streaming.writes.merge import release, source_already_materialized
from dbt_spark_streaming.writes.cdc.scd1 import apply_scd1
from dbt_spark_streaming.writes.cdc.scd2 import VERSIONS_CLOSED, apply_scd2


def create_tables_if_missing(
    spark: SparkSession, shape: FeedShape, table: str, partition_by, properties, exists: bool
) -> None:
    """The model's table (its stored columns, and scd2's validity) and its tombstones."""
    delta_tables.create_if_missing(
        spark, table, shape.table_schema(), partition_by, table_properties(properties), exists=exists
    )
    delta_tables.create_if_missing(
        spark, shape.changes.tombstones_table(table), shape.tombstones_schema(), properties=table_properties()
    )


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
        session.conf.unset(sequence_ties.USER_METADATA)
        for frame in used:
            release(frame)


def applying_changes(checkpoint: str, table: str, shape: FeedShape):
    """The foreachBatch function of a cdc_table model. Only a query's first batch can be a
    replay of one committed before a kill: its ties are counted as its first attempt found them."""
    first: list[bool] = [True]

    def apply(batch: DataFrame, batch_id: int, app_id: str) -> None:
        earlier = None
        if first:
            first.clear()
            earlier = sequence_ties.recorded_by_earlier_attempt(batch.sparkSession, table, app_id, batch_id)
        apply_change_batch(batch, batch_id, app_id, table, shape)
        if earlier is not None:
            batch_notes.add(app_id, batch_id, sequence_ties.NOTE, earlier)

    return once_per_batch(checkpoint, apply)


def applied_said(changes: ApplyChanges, merged: Mapping[str, int], query: StreamingQuery) -> str:
    """What the run's MERGEs did, for the run line after "N written" (inserted + updated rows):
    scd1 rows inserted, updated and deleted; scd2 versions added, closed (given an end), updated
    in place and removed; and the changes a sequence tie left out."""
    batch_ids = [batch.batch_id for batch in batches_of(query)]
    inserted, updated, deleted = merged["inserted"], merged["updated"], merged["deleted"]
    if changes.stored_as == "scd2":
        closed = batch_notes.total(str(query.id), batch_ids, VERSIONS_CLOSED)
        said = (f" ({inserted} new versions, {closed} closed, {max(updated - closed, 0)} updated in "
                f"place), {deleted} removed")
    else:
        said = f" ({inserted} inserted, {updated} updated), {deleted} deleted"
    tied = batch_notes.total(str(query.id), batch_ids, sequence_ties.NOTE)
    if tied:
        said += (f", {tied} tied change{'' if tied == 1 else 's'} not kept "
                 f"(on_sequence_tie '{changes.on_sequence_tie}')")
    return said
