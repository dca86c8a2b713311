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

Rollback (`python -m python_runners rollback --select m`) restores the table to its version
before the swap (Delta RESTORE, one commit) and the old checkpoint, within `rollback_window` of the
swap; readers are rebuilt again on their next run.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Callable, Iterable, Optional

from pyspark.sql import SparkSession

from python_runners.runtime.lifecycle import checkpoints

from python_runners.runtime.delta import tables as delta_tables

from python_runners.runtime.delta import hadoop_fs

from python_runners.runtime.lifecycle import query_changes
from python_runners.runtime.delta import catalog as streaming_catalog
from python_runners.runtime.errors import StreamingModelError
from python_runners.runtime.config.intervals import parse_duration_seconds

if TYPE_CHECKING:
    from python_runners.runtime.writes.streaming import StreamingWrite, StreamSummary

NEXT, PREVIOUS, STATE = "__next", "__previous", "__redeploy.json"
# The version whose commit replaced the table's rows: readers not past it are rebuilt.
REPLACED_AT = "streaming.replaced_at_version"
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
                f"`python -m python_runners rollback --select {model}`")


Build = Callable[["StreamingWrite"], "StreamSummary"]


def next_table(table: str) -> str:
    return table + NEXT


def _next_checkpoint(checkpoint: str) -> str:
    return checkpoint.rstrip("/") + NEXT


def _previous_checkpoint(checkpoint: str) -> str:
    return checkpoint.rstrip("/") + PREVIOUS


def _state_path(checkpoint: str) -> str:
    return checkpoint.rstrip("/") + STATE


def read_state(spark: SparkSession, checkpoint: str) -> Optional[Redeploy]:
    path = _state_path(checkpoint)
    if not hadoop_fs.exists(spark, path):
        return None
    return Redeploy(**json.loads(hadoop_fs.read_text(spark, path)))


def _save(spark: SparkSession, checkpoint: str, state: Redeploy) -> Redeploy:
    hadoop_fs.write_text(spark, _state_path(checkpoint), json.dumps(asdict(state), indent=1))
    return state


def beside(write: "StreamingWrite") -> "StreamingWrite":
    """The write that builds the new version: its own table, checkpoint and quarantine, run until
    caught up, never redeployed itself."""
    expectations = write.expectations
    if write.quarantine_table is not None:
        expectations = replace(expectations, quarantine_table_name=next_table(write.quarantine_table))
    return replace(
        write, target_table=next_table(write.target_table), checkpoint=_next_checkpoint(write.checkpoint),
        trigger=write.trigger.catch_up(), expectations=expectations,
        on_query_change=query_changes.DEFAULT_POLICY, streamed_models=(),
    )


def redeploy_if_due(spark: SparkSession, write: "StreamingWrite", build: Build) -> Optional[Redeployed]:
    """Before a model's run streams into its table: finish a redeploy a killed run left, start or
    resume one that is due; None when the model goes on as it is. `build` runs a write until
    it has caught up (run_streaming_write)."""
    state = read_state(spark, write.checkpoint)
    if state is not None and state.step == ROLLING_BACK:
        raise StreamingModelError(
            f"Model {write.model}: a rollback of its redeploy {state.id} was interrupted. Finish "
            f"it first: `python -m python_runners rollback --select {write.model}`."
        )
    if state is not None and state.step in (SWAPPING, SWAPPED):
        state = _swap_and_finish(spark, write, state)
    if state is not None and state.step == BUILDING:
        if _still_wanted(spark, write, state):
            return _redeploy(spark, write, state, build)
        discard(spark, write)
        state = None
    if state is not None and state.step == DONE:
        _end_rollback_window_if_over(spark, write, state)
    reason = _reason(spark, write)
    if reason is None:
        return None
    fingerprint = write.query.fingerprint if write.query is not None else ""
    return _redeploy(spark, write, Redeploy(uuid.uuid4().hex[:12], fingerprint, reason), build)


def _reason(spark: SparkSession, write: "StreamingWrite") -> Optional[str]:
    if not checkpoints.has_progress(spark, write.checkpoint):
        return None  # a new model or a full refresh: built from the start anyway
    replaced = upstream_replaced(spark, write.checkpoint, write.streamed_models)
    if replaced is not None:
        if write.changes is not None:
            raise StreamingModelError(
                f"Model {write.model}: {replaced}, and this cdc_table cannot go on over that "
                f"commit nor be redeployed (its history and tombstones are kept beside it). "
                f"Rebuild it: `dbt run --full-refresh --select {write.model}+`; or read the "
                f"upstream with stream_changes(ref(...)), which reads a swap as deletes and inserts."
            )
        if write.on_query_change == "fail":
            table = delta_tables.snapshot(spark, write.target_table)
            if table.exists:
                query_changes.check(write.model, "fail", write.query, table.properties)  # stops if changed
        return replaced
    if write.on_query_change != "redeploy" or write.query is None:
        return None
    table = delta_tables.snapshot(spark, write.target_table)
    return write.query.changes_since(table.properties) if table.exists else None


def _still_wanted(spark: SparkSession, write: "StreamingWrite", state: Redeploy) -> bool:
    """A redeploy being built goes on unless the query changed again since it began, or a model
    it streams from was replaced after it began reading."""
    if write.query is None or write.query.fingerprint != state.fingerprint:
        return False
    next_checkpoint = _next_checkpoint(write.checkpoint)
    return upstream_replaced(spark, next_checkpoint, write.streamed_models) is None


def _redeploy(spark: SparkSession, write: "StreamingWrite", state: Redeploy, build: Build) -> Redeployed:
    _save(spark, write.checkpoint, state)
    built = build(beside(write))
    quarantine = write.quarantine_table
    state = _save(spark, write.checkpoint, replace(
        state, step=SWAPPING,
        table_version=delta_tables.current_version(spark, write.target_table),
        quarantine_version=delta_tables.current_version(spark, quarantine) if quarantine else -1,
    ))
    state = _swap_and_finish(spark, write, state)
    return Redeployed(state.reason, built.output_rows, state.swap_version)


def _swap_and_finish(spark: SparkSession, write: "StreamingWrite", state: Redeploy) -> Redeploy:
    table, green = write.target_table, next_table(write.target_table)
    if state.step == SWAPPING:
        swapped = delta_tables.version_with_user_metadata(spark, table, state.table_version, state.marker)
        if swapped is None:
            _replace_rows(spark, green, table, write.partition_by, f"redeploy:{state.id}", state.marker)
            swapped = delta_tables.version_with_user_metadata(spark, table, state.table_version, state.marker)
        state = _save(spark, write.checkpoint, replace(state, step=SWAPPED, swap_version=swapped))
    table_now = delta_tables.snapshot(spark, table)
    if table_now.properties.get(REPLACED_AT) != str(state.swap_version):
        # The deployed query (the green table's), the swap, and a generation up: backfills are
        # appended again, through the new query.
        recorded = delta_tables.snapshot(spark, green).properties
        query = {key: recorded[key] for key in query_changes.RECORDED if key in recorded}
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
    return _save(spark, write.checkpoint, replace(state, step=DONE, swapped_at_ms=int(time.time() * 1000)))


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
    new, previous = _next_checkpoint(checkpoint), _previous_checkpoint(checkpoint)
    if not hadoop_fs.exists(spark, new):
        return
    if hadoop_fs.exists(spark, checkpoint):
        hadoop_fs.delete(spark, previous)
        hadoop_fs.rename(spark, checkpoint, previous)
    hadoop_fs.rename(spark, new, checkpoint)


def discard(spark: SparkSession, write: "StreamingWrite") -> None:
    """A redeploy being built, dropped: the table was never swapped."""
    delta_tables.drop_if_exists(spark, next_table(write.target_table))
    if write.quarantine_table is not None:
        delta_tables.drop_if_exists(spark, next_table(write.quarantine_table))
    hadoop_fs.delete(spark, _next_checkpoint(write.checkpoint))
    hadoop_fs.delete(spark, _state_path(write.checkpoint))


def forget(spark: SparkSession, table: str, checkpoint: str, companions: Iterable[str] = ()) -> None:
    """A full refresh: whatever a redeploy kept or left beside the model (and its quarantine)
    goes with its table."""
    for leftover in (table, *companions):
        delta_tables.drop_if_exists(spark, next_table(leftover))
    for path in (_next_checkpoint(checkpoint), _previous_checkpoint(checkpoint), _state_path(checkpoint)):
        hadoop_fs.delete(spark, path)


def _end_rollback_window_if_over(spark: SparkSession, write: "StreamingWrite", state: Redeploy) -> None:
    window = parse_duration_seconds(write.rollback_window) or 0
    if time.time() * 1000 - state.swapped_at_ms > window * 1000:
        hadoop_fs.delete(spark, _previous_checkpoint(write.checkpoint))
        hadoop_fs.delete(spark, _state_path(write.checkpoint))


def upstream_replaced(spark: SparkSession, checkpoint: str, tables: tuple[str, ...]) -> Optional[str]:
    """Why a checkpoint cannot go on reading one of `tables` (a model's redeploy or rollback
    replaced its rows at a version the checkpoint has not read past); None if it can."""
    if not tables:
        return None
    positions = delta_positions(spark, checkpoint)
    for table in tables:
        upstream = delta_tables.snapshot(spark, table)
        replaced = int(upstream.properties.get(REPLACED_AT, -1))
        position = positions.get(upstream.table_id)
        if replaced < 0 or position is None:
            continue
        version, from_snapshot = position
        if version < replaced or (version == replaced and not from_snapshot):
            return f"{table}, which it streams from, had its rows replaced at version {replaced} by a redeploy or rollback"
    return None


def delta_positions(spark: SparkSession, checkpoint: str) -> dict[str, tuple[int, bool]]:
    """Where the checkpoint's latest planned batch leaves each Delta input, by the table's Delta
    id: (version, whether it is within the snapshot the stream started from)."""
    offsets = checkpoint.rstrip("/") + "/offsets"
    batches = [int(name) for name in hadoop_fs.list_names(spark, offsets) if name.isdigit()]
    if not batches:
        return {}
    return positions_in_offsets(hadoop_fs.read_text(spark, f"{offsets}/{max(batches)}"))


def positions_in_offsets(text: str) -> dict[str, tuple[int, bool]]:
    """An offsets file's Delta source positions (after its version line and batch metadata)."""
    positions = {}
    for line in text.splitlines()[2:]:
        offset = json.loads(line) if line.strip().startswith("{") else None
        if isinstance(offset, dict) and "reservoirId" in offset:
            positions[offset["reservoirId"]] = (int(offset["reservoirVersion"]), bool(offset.get("isStartingVersion")))
    return positions


def roll_back(spark: SparkSession, write: "StreamingWrite") -> str:
    """The model's table and checkpoint as they were before its last redeploy's swap; what was
    done, to print. A redeploy still being built is discarded instead."""
    state = read_state(spark, write.checkpoint)
    if state is None:
        raise StreamingModelError(
            f"Model {write.model}: there is no redeploy to roll back (none was made, or its "
            f"rollback_window of {write.rollback_window} has passed and the old checkpoint was removed)."
        )
    if state.step == BUILDING:
        discard(spark, write)
        return (f"Model {write.model}: its redeploy {state.id} was still being built; it was "
                f"discarded and the table was left as it was.")
    if state.step in (SWAPPING, SWAPPED):
        state = _swap_and_finish(spark, write, state)
    previous = _previous_checkpoint(write.checkpoint)
    if state.step == DONE and not hadoop_fs.exists(spark, previous):
        raise StreamingModelError(
            f"Model {write.model}: the checkpoint from before redeploy {state.id} is gone "
            f"({previous}), so it cannot be rolled back."
        )
    state = _save(spark, write.checkpoint, replace(state, step=ROLLING_BACK))
    table = write.target_table
    if delta_tables.snapshot(spark, table).properties.get(ROLLED_BACK) != state.id:
        _restore(spark, write.model, table, state.table_version)
        restored = delta_tables.snapshot(spark, table)
        # The restored generation stays: the rows restored hold its backfills, and Delta's
        # transaction ids (not rewound) keep them from being appended again.
        streaming_catalog.record(spark, table, {REPLACED_AT: str(restored.version), ROLLED_BACK: state.id},
                                 current=restored.properties)
    quarantine = write.quarantine_table
    if quarantine is not None and state.quarantine_version >= 0:
        _restore(spark, write.model, quarantine, state.quarantine_version)
    elif quarantine is not None:
        delta_tables.drop_if_exists(spark, quarantine)  # the redeploy brought it
    if hadoop_fs.exists(spark, previous):
        hadoop_fs.delete(spark, write.checkpoint)
        hadoop_fs.rename(spark, previous, write.checkpoint)
    hadoop_fs.delete(spark, _state_path(write.checkpoint))
    return (
        f"Model {write.model}: rolled back to version {state.table_version} of {table}, from "
        f"before redeploy {state.id}, with its old checkpoint; its next run goes on from there. "
        f"The model's SQL is still the new one: revert it, or the next run redeploys it again. "
        f"Models that stream from it are rebuilt on their next run."
    )


def _restore(spark: SparkSession, model: str, table: str, version: int) -> None:
    try:
        spark.sql(f"restore table {table} to version as of {version}")
    except Exception as error:
        raise StreamingModelError(
            f"Model {model}: could not restore {table} to version {version}: {error}. If VACUUM "
            f"removed that version's files, it cannot be rolled back."
        ) from None


def roll_back_model(
    spark: SparkSession, node, graph, run_vars, table: str,
) -> str:
    """The rollback `dbt run-operation rollback_redeploy` asks for; what was done, to print."""
    from python_runners.runtime.config.model import read_model_config
    from python_runners.runtime.session import claim_lakehouse_for
    from python_runners.runtime.writes.streaming import StreamingWrite

    config = read_model_config(node, graph, run_vars)
    if config.materialized != "streaming_table":
        raise StreamingModelError(
            f"Model {config.model}: it is a {config.materialized}; only streaming_table models "
            f"are redeployed, so there is nothing to roll back."
        )
    claim_lakehouse_for(config.model)  # no dbt run or service is writing with this checkpoint
    return roll_back(spark, StreamingWrite.of_model(config, source_view="", target_table=table))
