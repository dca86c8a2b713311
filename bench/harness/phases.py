"""Where a foreachBatch call's time goes: a clock wrapped, in this process only, around the
functions the runtime calls (the runtime itself is unchanged).

Each foreachBatch call leaves one record: its seconds and the Spark jobs it started
(`foreach_batch`, `foreach_batch_jobs`) and, per phase timed inside it, `<phase>` and
`<phase>_jobs`. Jobs come from the scheduler's next job id (nan where this Spark does not show
it): on a small batch most of a phase's time is a fixed cost per job. Each benchmark's clock
(bench/cdc/phases.py, bench/expectations/foreach_batch_clock.py) says which functions it times.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Callable, Iterator

from py4j.protocol import Py4JError


class BatchClock:
    def __init__(self) -> None:
        self.records: list[dict] = []
        self._current: dict | None = None
        self._scheduler = None

    def take(self) -> list[dict]:
        """The records of the foreachBatch calls since the last take, oldest first."""
        taken, self.records = self.records, []
        return taken

    def _jobs(self) -> float:
        """Jobs Spark has started so far (its next job id); nan when it cannot tell."""
        try:
            next_id = self._scheduler.nextJobId()  # an AtomicInteger, which py4j hands over as its value
            return float(next_id if isinstance(next_id, int) else next_id.get())
        except (Py4JError, AttributeError):
            return float("nan")

    def _timed(self, name: str, function: Callable) -> Callable:
        """`function`, its seconds and jobs added to phase `name` of the foreachBatch call under way."""
        def timed(*args, **kwargs):
            jobs, started = self._jobs(), time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                record = self._current
                if record is not None:
                    record[name] = record.get(name, 0.0) + time.perf_counter() - started
                    record[f"{name}_jobs"] = record.get(f"{name}_jobs", 0.0) + self._jobs() - jobs
        return timed

    def _timed_call(self, function: Callable) -> Callable:
        """A foreachBatch function (batch, batch_id, ...) whose every call leaves a record."""
        def timed(batch, batch_id, *args):
            if self._scheduler is None:
                self._scheduler = batch.sparkSession.sparkContext._jsc.sc().dagScheduler()
            self._current = {}
            jobs, started = self._jobs(), time.perf_counter()
            try:
                return function(batch, batch_id, *args)
            finally:
                record, self._current = self._current, None
                record["foreach_batch"] = time.perf_counter() - started
                record["foreach_batch_jobs"] = self._jobs() - jobs
                self.records.append(self._finished(record))
        return timed

    def _finished(self, record: dict) -> dict:
        """A call's record as kept: the phases the clock reports."""
        return record

    @contextmanager
    def _patched(self, replacements: list[tuple[object, str, Callable]]) -> Iterator:
        """Each (owner, name, replacement) set while the block runs, the originals back after it."""
        saved = [(owner, name, getattr(owner, name)) for owner, name, _ in replacements]
        for owner, name, replacement in replacements:
            setattr(owner, name, replacement)
        try:
            yield self
        finally:
            for owner, name, original in saved:
                setattr(owner, name, original)
