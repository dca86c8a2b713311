"""Where a foreachBatch micro-batch's time goes, timed around the runtime's own calls.

`ForeachBatchClock.installed()` wraps, in this process only, the function a streaming write hands
to foreachBatch and every DataFrameWriter.save (the runtime is unchanged). Each foreachBatch call
leaves one record: its seconds and Spark jobs in all (`foreach_batch`), and per Delta write, in
the order they ran, `table` or `quarantine` (a path ending in __quarantine) with its seconds and
jobs. The first write of a batch also computes it (reads the source, applies the rules, counts);
what is left of the call (`other`) is the rest of foreachBatch: releasing a cached batch, reading
the table's log for the batch marks. The query's triggerExecution less foreach_batch is Spark's
own part (planning the source, offsets and commit logs).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Callable, Iterator

from py4j.protocol import Py4JError
from pyspark.sql import DataFrameWriter
from pyspark.sql.streaming import DataStreamWriter

from python_runners.runtime.config.expectations import QUARANTINE_SUFFIX


class ForeachBatchClock:
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
            next_id = self._scheduler.nextJobId()
            return float(next_id if isinstance(next_id, int) else next_id.get())
        except (Py4JError, AttributeError):
            return float("nan")

    def _timed_batch(self, function: Callable) -> Callable:
        def timed(batch, batch_id):
            if self._scheduler is None:
                self._scheduler = batch.sparkSession.sparkContext._jsc.sc().dagScheduler()
            self._current = {}
            jobs, started = self._jobs(), time.perf_counter()
            try:
                return function(batch, batch_id)
            finally:
                record, self._current = self._current, None
                record["foreach_batch"] = time.perf_counter() - started
                record["foreach_batch_jobs"] = self._jobs() - jobs
                written = sum(value for name, value in record.items()
                              if name in ("table", "quarantine"))
                record["other"] = max(0.0, record["foreach_batch"] - written)
                self.records.append(record)
        return timed

    def _timed_save(self, save: Callable) -> Callable:
        clock = self

        def timed_save(writer, path=None, *args, **kwargs):
            if clock._current is None:
                return save(writer, path, *args, **kwargs)
            name = "quarantine" if str(path).rstrip("/").endswith(QUARANTINE_SUFFIX) else "table"
            jobs, started = clock._jobs(), time.perf_counter()
            try:
                return save(writer, path, *args, **kwargs)
            finally:
                record = clock._current
                record[name] = record.get(name, 0.0) + time.perf_counter() - started
                record[f"{name}_jobs"] = record.get(f"{name}_jobs", 0.0) + clock._jobs() - jobs
                record.setdefault("first_write", name)
        return timed_save

    @contextmanager
    def installed(self) -> Iterator["ForeachBatchClock"]:
        foreach_batch, save = DataStreamWriter.foreachBatch, DataFrameWriter.save
        clock = self

        def timed_foreach_batch(writer, function):
            return foreach_batch(writer, clock._timed_batch(function))

        DataStreamWriter.foreachBatch = timed_foreach_batch
        DataFrameWriter.save = self._timed_save(save)
        try:
            yield self
        finally:
            DataStreamWriter.foreachBatch = foreach_batch
            DataFrameWriter.save = save
