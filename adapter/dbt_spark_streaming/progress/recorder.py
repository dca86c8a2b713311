"""Every micro-batch's progress, as it happens: shown live and kept in the progress table.

A StreamingQueryListener hears each query's progress; the run (adapter/dbt_spark_streaming/run/streaming_run.py)
owns it and makes it a listener of the session, once. Each batch, read once (progress/batch.py),
goes to the run's live display (progress/live.py) at once and is kept in memory until the next
flush appends it to the progress table: at the end of a run (on-run-end) and, while serving,
every few seconds and at stop. Listener events arrive asynchronously, so after a model catches up
the run waits until the listener has heard all of that query's batches.

It also keeps, per query name, the sum of the expectations' counts of every batch it heard: for
the always-on service (one process, one recorder) the counts since the service started, which
its status file shows.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Optional

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery, StreamingQueryListener

from dbt_spark_streaming.config.expectations import ExpectationCounts
from dbt_spark_streaming.progress import table as progress_table
from dbt_spark_streaming.progress.batch import BatchProgress, last_batch
from dbt_spark_streaming.progress.own_time import OwnTime

BatchCallback = Callable[[BatchProgress], None]
# A served query's (lag now, target_lag) in seconds, or None for a query the scheduler does not run.
LagOf = Callable[[str], Optional[tuple[float, Optional[float]]]]
# A unit test's micro-batch scenario runs a query of its own (runtime/unit_tests/model_tests.py): a test, not
# the pipeline's progress, so neither shown nor kept.
UNIT_TEST_QUERY_PREFIX = "unit_test__"
TRIAL_QUERY_PREFIX = "query_trial__"  # a changed query tried on a copy of its checkpoint (lifecycle/query_fit.py)
_UNRECORDED = (UNIT_TEST_QUERY_PREFIX, TRIAL_QUERY_PREFIX)
# Every run of a served on_new_data model is a query run of its own: the runs whose last batch
# is remembered (for wait_until_heard) are the latest this many, so a service's memory stays flat.
_RUNS_REMEMBERED = 1000


class ProgressRecorder(StreamingQueryListener):
    """Collects batch progress from every query of the session; appends it on flush()."""

    def __init__(self, on_batch: Optional[BatchCallback] = None, retention_days: Optional[float] = None):
        self._lock = threading.Condition()
        self._flush_lock = threading.Lock()
        self._pending: list[tuple] = []
        self._once_written: list[Callable[[SparkSession], None]] = []
        self._heard: dict[str, int] = {}  # run id -> last batch id heard
        self._latest: dict[str, BatchProgress] = {}  # query name -> its last batch
        self._expectation_totals: dict[str, ExpectationCounts] = {}  # query name -> summed
        self._on_batch = on_batch
        self._retention_days = retention_days
        self._retention_applied = False
        self.own_time = OwnTime()  # spent in onQueryProgress, on Py4J's callback thread
        self._lags: Optional[LagOf] = None

    # Listener callbacks run on a thread of Py4J's callback server.
    def onQueryStarted(self, event: Any) -> None:
        pass

    def onQueryProgress(self, event: Any) -> None:
        with self.own_time.timed("listener"):
            self.record(event.progress.json)

    def show_on(self, on_batch: Optional[BatchCallback]) -> None:
        """Where each batch goes as it is heard (the run's live display)."""
        self._on_batch = on_batch

    def lags_from(self, lag_of: Optional[LagOf]) -> None:
        """Where each batch's lag behind its inputs comes from, while a dataflow serves."""
        self._lags = lag_of

    def record(self, progress: Any) -> None:
        """One progress report (StreamingQueryProgress as JSON, a dict of it or a BatchProgress);
        triggers without a batch are skipped."""
        batch = BatchProgress.from_progress(progress)
        if not batch.ran_a_batch or (batch.query_name or "").startswith(_UNRECORDED):
            return
        lags = self._lags
        lag = lags(batch.query_name) if lags is not None else None
        with self._lock:
            self._pending.append(progress_table.progress_row(batch, lag))
            self._heard.pop(batch.run_id or "", None)  # the newest last, the oldest first out
            self._heard[batch.run_id or ""] = batch.batch_id
            if len(self._heard) > _RUNS_REMEMBERED:
                del self._heard[next(iter(self._heard))]
            self._latest[batch.query_name] = batch
            if batch.expectations:
                before = self._expectation_totals.get(batch.query_name, ExpectationCounts())
                self._expectation_totals[batch.query_name] = before.plus(batch.expectations)
            self._lock.notify_all()
        on_batch = self._on_batch
        if on_batch is not None:
            on_batch(batch)

    def record_up_to_date(self, query_name: str, batch_id: int, check_seconds: float,
                          inputs: tuple[str, ...], once_written: Callable[[SparkSession], None]) -> None:
        """A model that had nothing new and started no query: a row of its own in the table;
        `once_written` is called when the table has it."""
        row = progress_table.up_to_date_row(query_name, batch_id, round(check_seconds * 1000), inputs)
        with self._lock:
            self._pending.append(row)
            self._once_written.append(once_written)

    def onQueryIdle(self, event: Any) -> None:
        pass

    def onQueryTerminated(self, event: Any) -> None:
        pass

    def latest_batch(self, query_name: str) -> Optional[BatchProgress]:
        """The query's last batch heard: what `query.recentProgress` would give, without fetching
        and decoding a hundred progress reports from the JVM."""
        with self._lock:
            return self._latest.get(query_name)

    def expectation_totals(self, query_name: str) -> ExpectationCounts:
        """The query's expectations' counts summed over every batch heard (restarts included);
        empty (falsy) for a query without expectations."""
        with self._lock:
            return self._expectation_totals.get(query_name, ExpectationCounts())

    def wait_until_heard(self, query: StreamingQuery, timeout_seconds: float = 30) -> None:
        """Until the listener has heard the last batch the query itself reports."""
        latest = last_batch(query)
        if latest is None:
            return
        run_id, last = str(query.runId), latest.batch_id
        deadline = time.monotonic() + timeout_seconds
        with self._lock:
            while self._heard.get(run_id, -1) < last and time.monotonic() < deadline:
                self._lock.wait(0.1)

    def flush(self, spark: SparkSession) -> int:
        """Append the batches heard since the last flush; returns how many."""
        with self._flush_lock:
            with self._lock:
                rows, self._pending = self._pending, []
                once_written, self._once_written = self._once_written, []
            try:
                written = progress_table.append(spark, rows)
            except Exception:
                with self._lock:  # keep them for the next flush rather than lose them
                    self._pending = rows + self._pending
                    self._once_written = once_written + self._once_written
                raise
            for callback in once_written:
                callback(spark)
            if written and not self._retention_applied:
                progress_table.delete_older_than(
                    spark, self._retention_days or progress_table.retention_days()
                )
                self._retention_applied = True
            return written
