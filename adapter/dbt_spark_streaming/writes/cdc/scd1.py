"""stored_as='scd1': each key's latest change by sequence_by, merged into the table.

Per batch: the latest change per key wins (several changes to one key in a batch are one). The
MERGE applies a change only if its sequence is newer than the row's, so a late, older change
never overwrites a newer one and a repeated change is a no-op. A delete removes the row and is
remembered (tombstones.py): a later-arriving change older than the delete is dropped instead of
bringing the row back. A truncate (apply_as_truncates) deletes every row older than it, and
every change older than it, then and later.

The table's MERGE commits first, then the tombstones'; each carries the batch's transaction id,
so a batch replayed after a crash skips what was already committed, and the table's MERGE reads
the tombstones as they were before this batch either way.
"""

from __future__ import annotations

from delta.tables import DeltaTable
from pyspark.sql import Column, DataFrame, Observation, Window
from pyspark.sql import functions as F

from dbt_spark_streaming.writes.cdc.change_rows import (
    DELETE, SEQ, TRUNCATE, ChangeBatch, FeedShape, literal, observed_metrics,
)
from dbt_spark_streaming.writes import commit_faults
from dbt_spark_streaming.writes.cdc import sequence_ties
from dbt_spark_streaming.writes.merge import planned_once, sized_source
from dbt_spark_streaming.writes.cdc.tombstones import remember_deletes
from dbt_spark_streaming.writes.cdc.tombstones import tombstones as remembered


def apply_scd1(batch: ChangeBatch, shape: FeedShape, table: str, app_id: str, batch_id: int) -> list:
    """The batch's changes merged into `table`; returns the frames to release afterwards."""
    rows = batch.rows
    session = rows.sparkSession
    keys = list(shape.changes.keys)
    changes = rows.filter(~F.col(TRUNCATE))
    if shape.changes.apply_as_truncates:
        truncated_at = _truncated_at(batch, session.table(shape.changes.tombstones_table(table)))
        if truncated_at is not None:
            changes = changes.filter(F.col(SEQ) > truncated_at)
    latest = _latest_per_key(changes, shape)
    tombstones = remembered(session, shape, table)
    deleted = tombstones.groupBy(*keys).agg(F.max(SEQ).alias("__deleted_seq"))
    tied = F.col(sequence_ties.TIED)
    keeps_last = shape.changes.on_sequence_tie == "keep_last_landed"
    if keeps_last:  # ties with the table's rows found first, to count them
        marked = sequence_ties.with_table_ties(
            latest, _stored_changes(session, shape, table, tombstones, latest), shape, SEQ, DELETE
        )
    else:  # under 'fail' the MERGE finds them itself (below), with no read of the table of its own
        marked = latest.withColumn(sequence_ties.TIED, F.lit(False))
    upsert_at_a_delete = ~F.col(DELETE) & (F.col(SEQ) == F.col("__deleted_seq"))
    observed = Observation(f"cdc_scd1_source_{batch_id}")
    with planned_once(session):
        source = (
            marked.join(deleted, keys, "left")
            .withColumn(sequence_ties.TIED, tied | F.coalesce(upsert_at_a_delete, F.lit(False)))
            .filter(F.col(DELETE) | F.col("__deleted_seq").isNull() | (F.col(SEQ) > F.col("__deleted_seq")) | tied)
            .drop("__deleted_seq")
            .observe(observed, sequence_ties.tied_count())
            .localCheckpoint(eager=True)
        )
        tied_with_table = int(observed_metrics(observed).get("tied_with_table") or 0)
        sequence_ties.settle(source, batch, shape, SEQ, app_id, batch_id, tied_with_table)
    with sized_source(source, batch.changes) as sized:  # at most one row per change
        _merge(sized, batch, shape, table)
    commit_faults.committed(table)
    remember_deletes(batch, shape, table, app_id, batch_id)
    return [rows, source]


def _merge(source: DataFrame, batch: ChangeBatch, shape: FeedShape, table: str) -> None:
    keys = list(shape.changes.keys)
    keeps_last = shape.changes.on_sequence_tie == "keep_last_landed"
    target_seq = shape.sequence_of("target")
    newer = (F.col(f"batch.{SEQ}") > target_seq) | F.col(f"batch.{sequence_ties.TIED}")
    merge = DeltaTable.forName(source.sparkSession, table).alias("target").merge(source.alias("batch"), _keys_match(keys))
    if not keeps_last:
        merge = merge.whenMatchedUpdate(
            # a delete, or other values, at the sequence of the table's row
            condition=(F.col(f"batch.{SEQ}") == target_seq)
            & (F.col(f"batch.{DELETE}") | sequence_ties.values_differ(shape, "batch", "target")),
            set={shape.stored[0]: sequence_ties.raise_tie([F.col(f"batch.`{key}`") for key in keys], F.col(f"batch.{SEQ}"))},
        )
    merge = (
        merge
        .whenMatchedDelete(condition=F.col(f"batch.{DELETE}") & newer)
        .whenMatchedUpdate(condition=~F.col(f"batch.{DELETE}") & newer, set=_updates(shape))
        .whenNotMatchedInsert(
            condition=~F.col(f"batch.{DELETE}"),
            values={column: F.col(f"batch.`{column}`") for column in shape.stored},
        )
    )
    if batch.truncated_at is not None:
        merge = merge.whenNotMatchedBySourceDelete(condition=target_seq <= literal(batch.truncated_at))
    sequence_ties.executing(merge, shape.changes.model)


def _stored_changes(session, shape: FeedShape, table: str, tombstones: DataFrame, batch: DataFrame) -> DataFrame:
    """The changes the table holds for the batch's keys, to find ties with: each key's current
    row (an upsert at its sequence) and its deletes."""
    keys = list(shape.changes.keys)
    touched = F.broadcast(batch.select(*keys).distinct())
    compared = sequence_ties.compared_columns(shape)
    rows = session.table(table).join(touched, keys, "left_semi").select(
        *keys, *compared, shape.sequence_of().alias(SEQ), F.lit(False).alias(DELETE)
    )
    types = dict((field.name, field.dataType) for field in rows.schema.fields)
    # A delete at the sequence of the current row was followed by that row (keep_last_landed).
    deletes = tombstones.join(touched, keys, "left_semi").join(rows.select(*keys, SEQ), [*keys, SEQ], "left_anti")
    deletes = deletes.select(
        *keys, *[F.lit(None).cast(types[c]).alias(c) for c in compared], SEQ, F.lit(True).alias(DELETE)
    )
    return rows.unionByName(deletes)


def _latest_per_key(changes: DataFrame, shape: FeedShape) -> DataFrame:
    keys = list(shape.changes.keys)
    by_key = Window.partitionBy(*keys)
    latest = (
        changes.withColumn("__n", F.row_number().over(by_key.orderBy(F.col(SEQ).desc())))
        .filter("__n = 1").drop("__n")
    )
    if not shape.changes.ignore_null_updates:
        return latest.withColumn("__fresh", F.lit(True))
    # Each column's last non-null value among the upserts after the batch's last delete of the
    # key; `__fresh`: the key was deleted in this batch, so no value is kept from the table.
    last_delete = F.max(F.when(F.col(DELETE), F.col(SEQ))).over(by_key)
    upserts = (
        changes.withColumn("__last_delete", last_delete)
        .filter(~F.col(DELETE) & (F.col("__last_delete").isNull() | (F.col(SEQ) > F.col("__last_delete"))))
    )
    filled = upserts.groupBy(*keys).agg(
        *[F.max_by(F.col(c), F.when(F.col(c).isNotNull(), F.col(SEQ))).alias(c) for c in shape.values],
        F.max(F.col("__last_delete").isNotNull()).alias("__fresh"),
    )
    deletes = latest.filter(F.col(DELETE)).withColumn("__fresh", F.lit(True))
    upserted = latest.filter(~F.col(DELETE)).select(*keys, SEQ, DELETE, TRUNCATE).join(filled, keys)
    return deletes.unionByName(upserted)


def _updates(shape: FeedShape) -> dict[str, Column]:
    updates = {}
    for column in shape.values:
        value = F.col(f"batch.`{column}`")
        if shape.changes.ignore_null_updates and column not in shape.changes.sequence_by:
            value = F.when(F.col("batch.__fresh"), value).otherwise(
                F.coalesce(value, F.col(f"target.`{column}`"))
            )
        updates[column] = value
    return updates


def _keys_match(keys: list[str]) -> Column:
    condition = None
    for key in keys:
        match = F.col(f"target.`{key}`") == F.col(f"batch.`{key}`")
        condition = match if condition is None else condition & match
    return condition


def _truncated_at(batch: ChangeBatch, tombstones: DataFrame) -> Column | None:
    """The latest truncate seen, this batch's or an earlier one's: older changes are gone."""
    earlier = tombstones.filter(F.col(TRUNCATE)).agg(F.max(SEQ)).first()[0]
    seen = [literal(value) for value in (batch.truncated_at, earlier) if value is not None]
    return F.greatest(*seen) if len(seen) > 1 else (seen[0] if seen else None)
