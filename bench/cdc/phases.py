"""Where a cdc_table batch's time goes, timed inside the real foreachBatch function.

`PhaseClock.installed()` wraps, in this process only, the functions the runtime's
writes/cdc/apply_changes.py calls (the runtime itself is unchanged; bench/harness/phases.py): change_rows (the batch's
changes, computed once by a local checkpoint), apply_scd1 / apply_scd2, their remember_deletes
(the tombstones' MERGE) and Delta's MergeBuilder.execute. Each foreachBatch call leaves one record:

- change_rows: the batch read from the source, deduplicated and checkpointed,
- source: the rest of apply_scd1/2 before its MERGE: for SCD1 the latest change per key joined
  with the tombstones; for SCD2 the touched keys' history worked out again from the table's
  versions and the batch's changes, compared with the table (all checkpointed),
- merge: the table's MERGE (Delta's execute),
- tombstones: remember_deletes, the tombstones table's MERGE,
- other: the rest of the foreachBatch call (the empty check, the transaction id, releasing the
  checkpoints),
- foreach_batch: the whole call. The query's triggerExecution less this is Spark's own part of
  the micro-batch (planning the Delta source, offsets and commit logs).

With each phase's seconds, the Spark jobs it started (`<phase>_jobs`, from the scheduler's next
job id; absent if this Spark does not show it): on a small batch most of a phase's time is a
fixed cost per job.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from delta.tables import DeltaMergeBuilder

from bench.harness.phases import BatchClock
from dbt_spark_streaming.writes.cdc import apply_changes, scd1, scd2

PHASES = ("change_rows", "source", "merge", "tombstones", "other")


class PhaseClock(BatchClock):
    def __init__(self) -> None:
        super().__init__()
        self._inside: list[str] = []

    def _timed(self, name: str, function: Callable) -> Callable:
        timed = super()._timed(name, function)

        def inside(*args, **kwargs):
            self._inside.append(name)
            try:
                return timed(*args, **kwargs)
            finally:
                self._inside.pop()
        return inside

    def _timed_batches(self, once_per_batch: Callable) -> Callable:
        def timed_once_per_batch(checkpoint, write):
            return once_per_batch(checkpoint, self._timed_call(write))
        return timed_once_per_batch

    def _finished(self, record: dict) -> dict:
        return _phases(record)

    @contextmanager
    def installed(self) -> Iterator["PhaseClock"]:
        execute = DeltaMergeBuilder.execute
        clock = self

        def timed_execute(builder, *args, **kwargs):
            if "tombstones" in clock._inside:  # counted in remember_deletes
                return execute(builder, *args, **kwargs)
            return clock._timed("merge", execute)(builder, *args, **kwargs)

        with self._patched([
            (apply_changes, "once_per_batch", self._timed_batches(apply_changes.once_per_batch)),
            (apply_changes, "change_rows", self._timed("change_rows", apply_changes.change_rows)),
            (apply_changes, "apply_scd1", self._timed("apply", apply_changes.apply_scd1)),
            (apply_changes, "apply_scd2", self._timed("apply", apply_changes.apply_scd2)),
            (scd1, "remember_deletes", self._timed("tombstones", scd1.remember_deletes)),
            (scd2, "remember_deletes", self._timed("tombstones", scd2.remember_deletes)),
            (DeltaMergeBuilder, "execute", timed_execute),
        ]):
            yield self


def _phases(record: dict[str, float]) -> dict[str, float]:
    phases = {}
    for suffix in ("", "_jobs"):
        apply = record.get(f"apply{suffix}", 0.0)
        merge, tombstones = record.get(f"merge{suffix}", 0.0), record.get(f"tombstones{suffix}", 0.0)
        change_rows = record.get(f"change_rows{suffix}", 0.0)
        whole = record[f"foreach_batch{suffix}"]
        if whole != whole:  # nan: Spark did not show its job ids
            continue
        phases.update({
            f"change_rows{suffix}": change_rows,
            f"source{suffix}": max(0.0, apply - merge - tombstones),
            f"merge{suffix}": merge,
            f"tombstones{suffix}": tombstones,
            f"other{suffix}": max(0.0, whole - change_rows - apply),
            f"foreach_batch{suffix}": whole,
        })
    return phases
