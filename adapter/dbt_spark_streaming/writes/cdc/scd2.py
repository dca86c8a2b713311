"""stored_as='scd2': every version of a key, valid from `__start_at` until `__end_at` (null while
current), both values of sequence_by.

Per batch, the history of each key the batch touches is worked out again from its versions in
the table and the batch's changes, in sequence order: every upsert starts a version (with
track_history_columns, only one whose tracked columns differ from the version before it, or
that follows a delete; one that changes only untracked columns updates the version it falls
in); a delete ends the version before it. So
several changes to one key in a batch are several versions, a late change lands in its place
in the history and its neighbours' validity is fixed, and a repeated change (same key and
sequence) is a no-op. Only the versions that differ from the table's are merged, under the
batch's transaction id, so a batch replayed after a crash changes nothing.
"""

from __future__ import annotations

from delta.tables import DeltaTable
from pyspark.sql import DataFrame, Observation, Window
from pyspark.sql import functions as F

from dbt_spark_streaming.writes.cdc.change_rows import DELETE, SEQ, ChangeBatch, FeedShape, observed_metrics
from dbt_spark_streaming.progress import batch_notes
from dbt_spark_streaming.writes import commit_faults
from dbt_spark_streaming.writes.cdc import sequence_ties
from dbt_spark_streaming.writes.merge import planned_once, sized_source
from dbt_spark_streaming.writes.cdc.tombstones import remember_deletes, tombstones

_PRIORITY, _REMOVE, _WAS_CURRENT = "__priority", "__remove", "__was_current"
VERSIONS_CLOSED = "cdc_versions_closed"  # a batch's count of versions given an end (the run line)


def apply_scd2(batch: ChangeBatch, shape: FeedShape, table: str, app_id: str, batch_id: int) -> list:
    """The batch's changes merged into `table`'s history; returns the frames to release."""
    rows = batch.rows
    session = rows.sparkSession
    changes = shape.changes
    keys, start, end = list(changes.keys), changes.start_at_column, changes.end_at_column
    columns = [*shape.stored, start, end]
    touched = rows.select(*keys).distinct()
    with planned_once(session):
        # Read once: the history below reads the touched keys' versions five times over.
        existing = session.table(table).join(F.broadcast(touched), keys, "left_semi").localCheckpoint(eager=True)
        deleted = tombstones(session, shape, table).join(F.broadcast(touched), keys, "left_semi")
        events, arriving = _events(rows, existing, deleted, shape)
        sequence_ties.settle(arriving, batch, shape, SEQ, app_id, batch_id)
        history = _history(events, shape)
        # Counted on the way into the checkpoint: its rows, and the table's current versions it
        # gives an end (closes).
        current = existing.filter(F.col(end).isNull()).select(*keys, start, F.lit(True).alias(_WAS_CURRENT))
        closes = ~F.col(_REMOVE) & F.col(end).isNotNull() & F.col(_WAS_CURRENT).isNotNull()
        counted = Observation(f"cdc_scd2_source_{batch_id}")
        source = (
            history.select(*columns).subtract(existing.select(*columns)).withColumn(_REMOVE, F.lit(False))
            .unionByName(
                existing.select(*columns).join(history.select(*keys, start), [*keys, start], "left_anti")
                .withColumn(_REMOVE, F.lit(True))
            )
            .join(current, [*keys, start], "left")
            .observe(counted, F.count(F.lit(1)).alias("rows"), F.count(F.when(closes, 1)).alias("closed"))
            .drop(_WAS_CURRENT)
            .localCheckpoint(eager=True)
        )
        found = observed_metrics(counted)
        if not found.get("rows"):  # repeats, or deletes of what was already deleted: only remembered
            remember_deletes(batch, shape, table, app_id, batch_id)
            return [rows, existing, source]
        batch_notes.add(app_id, batch_id, VERSIONS_CLOSED, int(found.get("closed") or 0))
    match = F.col(f"target.`{start}`") == F.col(f"batch.`{start}`")
    for key in keys:
        match = match & (F.col(f"target.`{key}`") == F.col(f"batch.`{key}`"))
    every_column = {column: F.col(f"batch.`{column}`") for column in columns}
    with sized_source(source, int(found["rows"])) as sized:
        (
            DeltaTable.forName(session, table).alias("target")
            .merge(sized.alias("batch"), match)
            .whenMatchedDelete(condition=F.col(f"batch.{_REMOVE}"))
            .whenMatchedUpdate(set=every_column)
            .whenNotMatchedInsert(condition=~F.col(f"batch.{_REMOVE}"), values=every_column)
            .execute()
        )
    commit_faults.committed(table)
    remember_deletes(batch, shape, table, app_id, batch_id)
    return [rows, existing, source]


def _events(rows: DataFrame, existing: DataFrame, deleted: DataFrame, shape: FeedShape) -> tuple[DataFrame, DataFrame]:
    """The touched keys' changes: their versions in the table read back as upserts, their
    deletes (ends no version follows, and the tombstones), with the batch's; a change already
    in the table wins over its repeat (its untracked columns may have been updated since), and
    over a tied change unless on_sequence_tie keeps the last landed. Also the batch's changes,
    each marked if tied (sequence_ties.py)."""
    changes = shape.changes
    keys, start, end = list(changes.keys), changes.start_at_column, changes.end_at_column
    values = shape.values
    nothing = [F.lit(None).cast(rows.schema[c].dataType).alias(c) for c in values]
    upserts = existing.select(*keys, *values, F.col(start).alias(SEQ), F.lit(False).alias(DELETE))
    # An end or a delete at a version's start was followed by that version (a tie kept last).
    ends = (
        existing.filter(F.col(end).isNotNull()).select(*keys, F.col(end).alias(SEQ))
        .unionByName(deleted.select(*keys, SEQ))
        .join(existing.select(*keys, F.col(start).alias(SEQ)), [*keys, SEQ], "left_anti")
        .select(*keys, *nothing, SEQ, F.lit(True).alias(DELETE))
    )
    known = upserts.unionByName(ends)
    arriving = sequence_ties.with_table_ties(rows.select(*keys, *values, SEQ, DELETE), known, shape, SEQ, DELETE)
    wins = F.when(F.col(sequence_ties.TIED), -1).otherwise(1)
    first = Window.partitionBy(*keys, SEQ).orderBy(_PRIORITY)
    events = (
        known.withColumn(_PRIORITY, F.lit(0))
        .unionByName(arriving.withColumn(_PRIORITY, wins).drop(sequence_ties.TIED))
        .withColumn("__n", F.row_number().over(first)).filter("__n = 1").drop("__n", _PRIORITY)
    )
    return events, arriving


def _history(events: DataFrame, shape: FeedShape) -> DataFrame:
    """The versions the events make, per key, in sequence order."""
    changes = shape.changes
    keys, start, end = list(changes.keys), changes.start_at_column, changes.end_at_column
    in_order = Window.partitionBy(*keys).orderBy(SEQ)
    so_far = in_order.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    counted = lambda flag: F.sum(F.when(flag, 1).otherwise(0)).over(so_far)  # noqa: E731
    if changes.ignore_null_updates:
        # A null keeps the value before it, within the stretch since the key's last delete.
        events = events.withColumn("__alive_since", counted(F.col(DELETE)))
        stretch = Window.partitionBy(*keys, "__alive_since").orderBy(SEQ).rowsBetween(
            Window.unboundedPreceding, Window.currentRow
        )
        events = events.select(
            *keys, *[F.last(F.col(c), ignorenulls=True).over(stretch).alias(c) for c in shape.values],
            SEQ, DELETE,
        )
    previous_delete = F.lag(F.col(DELETE)).over(in_order)
    changed = F.lit(True)  # every column tracked: every change is a version
    if changes.tracks_some_columns:
        tracked = F.struct(*[F.col(c) for c in shape.tracked])
        changed = ~tracked.eqNullSafe(F.lag(tracked).over(in_order))
    starts_version = ~F.col(DELETE) & (previous_delete.isNull() | previous_delete | changed)
    grouped = events.withColumn("__version", counted(F.col(DELETE) | starts_version))
    versions = grouped.groupBy(*keys, "__version").agg(
        F.min(SEQ).alias(start),
        F.max(F.col(DELETE)).alias(DELETE),
        F.max_by(F.struct(*[F.col(c) for c in shape.values]), F.col(SEQ)).alias("__latest"),
    )
    by_start = Window.partitionBy(*keys).orderBy(start)
    return (
        versions.withColumn(end, F.lead(F.col(start)).over(by_start))
        .filter(~F.col(DELETE))
        .select(*keys, *[F.col(f"__latest.`{c}`").alias(c) for c in shape.values], start, end)
    )
