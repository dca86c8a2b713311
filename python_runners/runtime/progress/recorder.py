"""Every micro-batch's progress, as it happens: shown live and kept in the progress table.

A StreamingQueryListener, installed once per session, hears each query's progress. Each batch
goes to the live display (python_runners/runtime/progress/live.py) at once and is kept in memory until
the next flush appends it to the progress table: at the end of a run (on-run-end) and, while
serving, every few seconds and at stop. Listener events arrive asynchronously, so after a model
catches up the run waits until the listener has heard all of that query's batches.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Callable, Optional

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery, StreamingQueryListener

from python_runners.runtime.progress import table as progress_table
from python_runners.runtime.own_time import OwnTime

BatchCallback = Callable[[dict], None]


class ProgressRecorder(StreamingQueryListener):
    """Collects batch progress from every query of the session; appends it on flush()."""

    def __init__(self, on_batch: Optional[BatchCallback] = None, retention_days: Optional[float] = None):
        self._lock = threading.Condition()
        self._flush_lock = threading.Lock()
        self._pending: list[tuple] = []
        self._heard: dict[str, int] = {}  # run id -> last batch id heard
        self._latest: dict[str, dict] = {}  # query name -> its last batch's progress
        self._on_batch = on_batch
        self._retention_days = retention_days
        self._retention_applied = False
        self.own_time = OwnTime()  # spent in onQueryProgress, on Py4J's callback thread

    # Listener callbacks run on a thread of Py4J's callback server.
    def onQueryStarted(self, event: Any) -> None:
        pass

    def onQueryProgress(self, event: Any) -> None:
        with self.own_time.timed("listener"):
            self.record(json.loads(event.progress.json))

    def record(self, progress: dict) -> None:
        """One progress report (StreamingQueryProgress as JSON); triggers without a batch are skipped."""
        if not progress_table.ran_a_batch(progress):
            return
        with self._lock:
            self._pending.append(progress_table.progress_row(progress))
            self._heard[progress["runId"]] = int(progress["batchId"])
            self._latest[progress.get("name") or ""] = progress
            self._lock.notify_all()
        if self._on_batch is not None:
            self._on_batch(progress)

    def onQueryIdle(self, event: Any) -> None:
        pass

    def onQueryTerminated(self, event: Any) -> None:
        pass

    def latest_batch(self, query_name: str) -> Optional[dict]:
        """The progress of the query's last batch heard: what `query.recentProgress` would give,
        without fetching and decoding a hundred progress reports from the JVM."""
        with self._lock:
            return self._latest.get(query_name)

    def wait_until_heard(self, query: StreamingQuery, timeout_seconds: float = 30) -> None:
        """Until the listener has heard the last batch the query itself reports."""
        latest = progress_table.last_batch(query)
        if latest is None:
            return
        run_id, last = str(query.runId), int(latest["batchId"])
        deadline = time.monotonic() + timeout_seconds
        with self._lock:
            while self._heard.get(run_id, -1) < last and time.monotonic() < deadline:
                self._lock.wait(0.1)

    def flush(self, spark: SparkSession) -> int:
        """Append the batches heard since the last flush; returns how many."""
        with self._flush_lock:
            with self._lock:
                rows, self._pending = self._pending, []
            try:
                written = progress_table.append(spark, rows)
            except Exception:
                with self._lock:  # keep them for the next flush rather than lose them
                    self._pending = rows + self._pending
                raise
            if written and not self._retention_applied:
                progress_table.delete_older_than(
                    spark, self._retention_days or progress_table.retention_days()
                )
                self._retention_applied = True
            return written


_recorders: dict[int, ProgressRecorder] = {}
_install_lock = threading.Lock()


def recorder(spark: SparkSession, on_batch: Optional[BatchCallback] = None) -> ProgressRecorder:
    """The session's recorder, installed as a listener on first use (with `on_batch`, if given)."""
    key = id(spark._jsparkSession)
    with _install_lock:
        if key not in _recorders:
            installed = ProgressRecorder(on_batch)
            spark.streams.addListener(installed)
            _recorders[key] = installed
        return _recorders[key]
