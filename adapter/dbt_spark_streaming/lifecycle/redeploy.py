"""Blue/green redeploy: a changed streaming model rebuilt beside its table, then swapped in.

A model with `on_query_change='redeploy'` whose query changed since its table was written, or a
model whose checkpoint has not read past the commit that replaced the rows of a model it streams
from (that model's redeploy or rollback), is redeployed:

1. build: the new version runs as a query of its own from the start of its inputs, into
   `<table>__next` with the checkpoint `<checkpoint>__next`, until it has caught up. Meanwhile
   the table keeps serving its readers the old version, complete.
2. swap: one Delta commit replaces the table's rows, and schema, with the new version's. Readers
   see the old version or the new one, never a mix, and the table keeps its Delta identity.
3. finish: the table records the new query and the swap's version (`streaming.replaced_at_version`);
   the quarantine, if any, is swapped the same way; the new checkpoint becomes the model's and the
   old one is kept as `<checkpoint>__previous`; the `__next` tables are dropped. The run then goes
   on from the new checkpoint into the table, so input that arrived while it was built follows.

Each step is recorded in `<checkpoint>__redeploy.json` before it is taken, and each can be taken
again (the swap commit carries a Delta transaction id), so a run killed at any moment is finished
by the next one. After the swap the redeploy is always finished, whatever the model's SQL says
by then.

A streaming reader of the model (a plain `stream(ref())` or `stream_appends`) cannot go on over
the swap: on its next run it is rebuilt the same way, from the start of the swapped table, so it
neither misses nor repeats a row. A `stream_changes` reader reads the swap as deletes and inserts.

Rollback (`dbt-spark-streaming rollback --select m`) restores the table to its version
before the swap (Delta RESTORE, one commit) and the old checkpoint, within `rollback_window` of the
swap; readers are rebuilt again on their next run.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict, dataclass, replace
from typing import Iterable, Optional

from pyspark.sql import SparkSession

from dbt_spark_streaming.lifecycle import checkpoints
from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.config import query_version
from dbt_spark_streaming.lifecycle import query_changes
from dbt_spark_streaming.lifecycle.upstream import REPLACED_AT, upstream_replaced
from dbt_spark_streaming.delta import catalog as streaming_catalog
from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.writes.streaming import StreamingWrite

NEXT, PREVIOUS, STATE = "__next", "__previous", "__redeploy.json"
ROLLED_BACK = "streaming.rolled_back_redeploy"
BUILDING, SWAPPING, SWAPPED, DONE, ROLLING_BACK = "building", "swapping", "swapped", "done", "rolling back"


@dataclass(frozen=True)
class Redeploy:
    """One redeploy of a model, as recorded beside its checkpoint."""

    id: str
    fingerprint: str  # of the query being deployed
    reason: str
    step: str = BUILDING
    table_version: int = -1  # the table's version before the swap
    quarantine_version: int = -1
    swap_version: int = -1
    swapped_at_ms: int = 0

    @property
    def marker(self) -> str:
        """The swap commit's userMetadata."""
        return f"redeploy {self.id}: the new version swapped in"


@dataclass(frozen=True)
class Redeployed:
    """What a run's redeploy did, for its output."""

    reason: str
    rows: int
    swap_version: int

    def said(self, model: str) -> str:
        return (f"; redeployed ({query_changes.summary(self.reason)}): rebuilt from the start of its inputs beside the table, "
                f"{self.rows} rows, swapped in at version {self.swap_version}; roll back with "
                f"`dbt run-operation rollback_redeploy --args '{{select: {model}}}'`")


def next_table(table: str) -> str:
    return table + NEXT


def _next_checkpoint(checkpoint: str) -> str:
    return checkpoint.rstrip("/") + NEXT


def previous_checkpoint(checkpoint: str) -> str:
    return checkpoint.rstrip("/") + PREVIOUS


def state_path(checkpoint: str) -> str:
    return checkpoint.rstrip("/") + STATE


def read_state(spark: SparkSession, checkpoint: str) -> Optional[Redeploy]:
    path = state_path(checkpoint)
    if not hadoop_fs.exists(spark, path):
        return None
    return Redeploy(**json.loads(hadoop_fs.read_text(spark, path)))


def save(spark: SparkSession, checkpoint: str, state: Redeploy) -> Redeploy:
    hadoop_fs.write_text(spark, state_path(checkpoint), json.dumps(asdict(state), indent=1))
    return state


def beside(write: StreamingWrite) -> StreamingWrite:
    """The write that builds the new version: its own table, checkpoint and quarantine, run until
    caught up, never redeployed itself."""
    expectations = write.config.expectations
    if write.quarantine_table is not None:
        expectations = replace(expectations, quarantine_table_name=next_table(write.quarantine_table))
    config = replace(
        write.config, checkpoint=_next_checkpoint(write.checkpoint), trigger=write.trigger.catch_up(),
        expectations=expectations, on_query_change=query_version.DEFAULT_POLICY, streamed_models=(),
    )
    return replace(write, config=config, target_table=next_table(write.target_table))


def due(spark: SparkSession, write: StreamingWrite) -> Optional[Redeploy]:
    """Before a model's run streams into its table: finish a redeploy a killed run left; the
    redeploy to build now (one to resume, or a new one, recorded), or None when the model goes on
    as it is. The caller builds `beside(write)` until it has caught up, then calls swap_in."""
    state = read_state(spark, write.checkpoint)
    if state is not None and state.step == ROLLING_BACK:
        raise StreamingModelError(
            f"Model {write.model}: a rollback of its redeploy {state.id} was interrupted. Finish "
            f"it first: `dbt run-operation rollback_redeploy --args '{{select: {write.model}}}'`."
        )
    if state is not None and state.step in (SWAPPING, SWAPPED):
        state = swap_and_finish(spark, write, state)
    if state is not None and state.step == BUILDING:
        if _still_wanted(spark, write, state):
            return state
        discard(spark, write)
        state = None
    if state is not None and state.step == DONE:
        _end_rollback_window_if_over(spark, write, state)
    reason = _reason(spark, write)
    if reason is None:
        return None
    fingerprint = write.config.query.fingerprint if write.config.query is not None else ""
    return save(spark, write.checkpoint, Redeploy(uuid.uuid4().hex[:12], fingerprint, reason))


def _reason(spark: SparkSession, write: StreamingWrite) -> Optional[str]:
    if not checkpoints.has_progress(spark, write.checkpoint):
        return None  # a new model or a full refresh: built from the start anyway
    replaced = upstream_replaced(spark, write.checkpoint, write.config.streamed_models)
    if replaced is not None:
        if write.config.changes is not None:
            raise StreamingModelError(
                f"Model {write.model}: {replaced}, and this cdc_table cannot go on over that "
                f"commit nor be redeployed (its history and tombstones are kept beside it). "
                f"Rebuild it: `dbt run --full-refresh --select {write.model}+`; or read the "
                f"upstream with stream_changes(ref(...)), which reads a swap as deletes and inserts."
            )
        if write.config.on_query_change == "fail":
            table = delta_tables.snapshot(spark, write.target_table)
            if table.exists:
                query_changes.check(write.model, "fail", write.config.query, table.properties)  # stops if changed
        return replaced
    if write.config.on_query_change != "redeploy" or write.config.query is None:
        return None
    table = delta_tables.snapshot(spark, write.target_table)
    return write.config.query.changes_since(table.properties) if table.exists else None


def _still_wanted(spark: SparkSession, write: StreamingWrite, state: Redeploy) -> bool:
    """A redeploy being built goes on unless the query changed again since it began, or a model
    it streams from was replaced after it began reading."""
    if write.config.query is None or write.config.query.fingerprint != state.fingerprint:
        return False
    next_checkpoint = _next_checkpoint(write.checkpoint)
    return upstream_replaced(spark, next_checkpoint, write.config.streamed_models) is None


def swap_in(spark: SparkSession, write: StreamingWrite, state: Redeploy, rows_built: int) -> Redeployed:
    """The new version, built beside the table with `rows_built` rows, swapped in."""
    quarantine = write.quarantine_table
    state = save(spark, write.checkpoint, replace(
        state, step=SWAPPING,
        table_version=delta_tables.current_version(spark, write.target_table),
        quarantine_version=delta_tables.current_version(spark, quarantine) if quarantine else -1,
    ))
    state = swap_and_finish(spark, write, state)
    return Redeployed(state.reason, rows_built, state.swap_version)


def swap_and_finish(spark: SparkSession, write: StreamingWrite, state: Redeploy) -> Redeploy:
    table, green = write.target_table, next_table(write.target_table)
    if state.step == SWAPPING:
        swapped = delta_tables.version_with_user_metadata(spark, table, state.table_version, state.marker)
        if swapped is None:
            _replace_rows(spark, green, table, write.config.partition_by, f"redeploy:{state.id}", state.marker)
            swapped = delta_tables.version_with_user_metadata(spark, table, state.table_version, state.marker)
        state = save(spark, write.checkpoint, replace(state, step=SWAPPED, swap_version=swapped))
    table_now = delta_tables.snapshot(spark, table)
    if table_now.properties.get(REPLACED_AT) != str(state.swap_version):
        # The deployed query (the green table's), the swap, and a generation up: backfills are
        # appended again, through the new query.
        recorded = delta_tables.snapshot(spark, green).properties
        query = {key: recorded[key] for key in query_version.RECORDED if key in recorded}
        streaming_catalog.record(spark, table, {
            **query, REPLACED_AT: str(state.swap_version),
            delta_tables.GENERATION: str(int(table_now.properties.get(delta_tables.GENERATION, 0)) + 1),
        }, current=table_now.properties)
    quarantine = write.quarantine_table
    if quarantine is not None and spark.catalog.tableExists(next_table(quarantine)):
        if not spark.catalog.tableExists(quarantine):
            spark.sql(f"create table {quarantine} using delta as select * from {next_table(quarantine)} where false")
        _replace_rows(spark, next_table(quarantine), quarantine, (), f"redeploy:{state.id}:quarantine", state.marker)
    _move_in_new_checkpoint(spark, write.checkpoint)
    delta_tables.drop_if_exists(spark, green)
    if quarantine is not None:
        delta_tables.drop_if_exists(spark, next_table(quarantine))
    return save(spark, write.checkpoint, replace(state, step=DONE, swapped_at_ms=int(time.time() * 1000)))


def _replace_rows(spark: SparkSession, source: str, table: str, partition_by, app_id: str, marker: str) -> None:
    """One commit: the table's rows and columns become `source`'s; taken once per `app_id`.

    When every column the table had stays, with its type, the new columns are merged in and the
    table's NOT NULLs (a contract's) stay; otherwise the schema is replaced, and Delta takes it
    as nullable."""
    rows = spark.table(source)
    kept = {(column.name, column.dataType) for column in rows.schema}
    keeps_columns = all((column.name, column.dataType) in kept for column in spark.table(table).schema)
    writer = (
        rows.write.format("delta").mode("overwrite")
        .option("mergeSchema" if keeps_columns else "overwriteSchema", "true")
        .option("txnAppId", app_id).option("txnVersion", 0).option("userMetadata", marker)
    )
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.save(delta_tables.location(spark, table))


def _move_in_new_checkpoint(spark: SparkSession, checkpoint: str) -> None:
    """The new checkpoint becomes the model's, the old one its previous (each move taken again
    safely after a kill)."""
    new, previous = _next_checkpoint(checkpoint), previous_checkpoint(checkpoint)
    if not hadoop_fs.exists(spark, new):
        return
    if hadoop_fs.exists(spark, checkpoint):
        hadoop_fs.delete(spark, previous)
        hadoop_fs.rename(spark, checkpoint, previous)
    hadoop_fs.rename(spark, new, checkpoint)


def discard(spark: SparkSession, write: StreamingWrite) -> None:
    """A redeploy being built, dropped: the table was never swapped."""
    delta_tables.drop_if_exists(spark, next_table(write.target_table))
    if write.quarantine_table is not None:
        delta_tables.drop_if_exists(spark, next_table(write.quarantine_table))
    hadoop_fs.delete(spark, _next_checkpoint(write.checkpoint))
    hadoop_fs.delete(spark, state_path(write.checkpoint))


def forget(spark: SparkSession, table: str, checkpoint: str, companions: Iterable[str] = ()) -> None:
    """A full refresh: whatever a redeploy kept or left beside the model (and its quarantine)
    goes with its table."""
    for leftover in (table, *companions):
        delta_tables.drop_if_exists(spark, next_table(leftover))
    for path in (_next_checkpoint(checkpoint), previous_checkpoint(checkpoint), state_path(checkpoint)):
        hadoop_fs.delete(spark, path)


def _end_rollback_window_if_over(spark: SparkSession, write: StreamingWrite, state: Redeploy) -> None:
    if time.time() * 1000 - state.swapped_at_ms > write.config.rollback_seconds * 1000:
        hadoop_fs.delete(spark, previous_checkpoint(write.checkpoint))
        hadoop_fs.delete(spark, state_path(write.checkpoint))
