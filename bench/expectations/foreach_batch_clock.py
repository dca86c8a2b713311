"""Where a foreachBatch micro-batch's time goes, timed around the runtime's own calls.

`ForeachBatchClock.installed()` wraps, in this process only, the function a streaming write hands
to foreachBatch and every DataFrameWriter.save (the runtime is unchanged; bench/harness/phases.py).
Each foreachBatch call leaves one record: its seconds and Spark jobs in all (`foreach_batch`), and
per Delta write, in the order they ran, `table` or `quarantine` (a path ending in __quarantine)
with its seconds and jobs. The first write of a batch also computes it (reads the source, applies
the rules, counts); what is left of the call (`other`) is the rest of foreachBatch: releasing a
cached batch, reading the table's log for the batch marks. The query's triggerExecution less
foreach_batch is Spark's own part (planning the source, offsets and commit logs).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from pyspark.sql import DataFrameWriter
from pyspark.sql.streaming import DataStreamWriter

from bench.harness.phases import BatchClock
from dbt_spark_streaming.config.expectations import QUARANTINE_SUFFIX


class ForeachBatchClock(BatchClock):
    def _finished(self, record: dict) -> dict:
        written = sum(value for name, value in record.items() if name in ("table", "quarantine"))
        record["other"] = max(0.0, record["foreach_batch"] - written)
        return record

    def _timed_save(self, save: Callable) -> Callable:
        def timed_save(writer, path=None, *args, **kwargs):
            if self._current is None:
                return save(writer, path, *args, **kwargs)
            name = "quarantine" if str(path).rstrip("/").endswith(QUARANTINE_SUFFIX) else "table"
            try:
                return self._timed(name, save)(writer, path, *args, **kwargs)
            finally:
                self._current.setdefault("first_write", name)
        return timed_save

    @contextmanager
    def installed(self) -> Iterator["ForeachBatchClock"]:
        foreach_batch = DataStreamWriter.foreachBatch
        clock = self

        def timed_foreach_batch(writer, function):
            return foreach_batch(writer, clock._timed_call(function))

        with self._patched([(DataStreamWriter, "foreachBatch", timed_foreach_batch),
                            (DataFrameWriter, "save", self._timed_save(DataFrameWriter.save))]):
            yield self
