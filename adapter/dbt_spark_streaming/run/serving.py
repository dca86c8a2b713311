"""Keep the run's streams serving until Ctrl-C or SIGTERM, then stop each one cleanly.

Two kinds are served side by side: processing-time queries, which run on their own clock, and
on_new_data models, which the dataflow scheduler (serve/dataflow.py) runs again each time one of
their inputs commits; the loop below wakes every `dataflow.POLL_SECONDS` for it, and at once
when one of its runs ends.

While serving, a query that fails is started again from its checkpoint after a pause that doubles
with each failure in a row (1 s, 2 s, 4 s ... at most 60 s); the reason is logged. After
`backoff.MAX_FAILURES_IN_A_ROW` failures with no batch completed in between, it is set aside and
tried again every few minutes, while the others serve on (serve/backoff.py); serving gives up only
when every query and model it serves is set aside, ending with their last errors. Batch progress
goes to the progress table every half minute, on a thread of its own (serve/progress_keeper.py),
and the state of every query to the service's
status file (adapter/dbt_spark_streaming/progress/status_file.py), which `dbt-spark-streaming status` reads.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import IO, Callable, Iterable, Optional

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from dbt_spark_streaming.driver.host import host_if_none
from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.serve import backoff
from dbt_spark_streaming.run import interruption
from dbt_spark_streaming.progress import status_file as service_status
from dbt_spark_streaming.progress.batch import last_batch
from dbt_spark_streaming.progress.recorder import ProgressRecorder
from dbt_spark_streaming.serve.dataflow import POLL_SECONDS as DATAFLOW_POLL_SECONDS, Dataflow
from dbt_spark_streaming.serve.progress_keeper import ProgressKeeper
from dbt_spark_streaming.run.streaming_run import StreamingRun
from dbt_spark_streaming.run.model_run import failure
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.progress.own_time import OwnTime
from dbt_spark_streaming.errors import StreamingModelError, root_cause
from dbt_spark_streaming.session import started_conf

POLL_SECONDS = 0.5
STATUS_SECONDS = 2.0

Log = Callable[[str], None]


@dataclass
class ServedQuery:
    name: str
    query: StreamingQuery
    restarts: int = 0
    failures_in_a_row: int = 0
    last_failure: Optional[str] = None
    restart_at: Optional[float] = None
    batch_at_restart: int = -1

    def last_batch(self) -> int:
        batch = last_batch(self.query)
        return batch.batch_id if batch else -1

    @property
    def active(self) -> bool:
        return bool(self.query.isActive)

    @property
    def set_aside(self) -> bool:
        return not self.active and backoff.set_aside(self.failures_in_a_row)

    @property
    def state(self) -> str:
        if self.set_aside and self.restart_at is not None:
            return backoff.set_aside_state(self.failures_in_a_row, self.restart_at - time.monotonic())
        return "active" if self.active else "not running"


def serve_until_stopped(spark: SparkSession, run: StreamingRun, log: Log = print) -> list[str]:
    """Block while streaming queries run; on a signal stop them between batches. `run`: the
    run that started them (its recorder and live display; its writes, to restart a failed query).

    Returns the names of the queries that were stopped.
    """
    queries = [ServedQuery(q.name, q) for q in spark.streams.active]
    scheduled = run.scheduled()
    if not queries and not scheduled:
        return []
    stop_requested, wake = threading.Event(), threading.Event()
    signals: list[int] = []
    restore = _install_handlers(stop_requested, signals, wake)
    run.unserved_said = True  # served: nothing to say at the end about serving
    run.served = True
    recorder = run.listen(spark)
    dataflow = Dataflow(spark, scheduled, log, wake) if scheduled else None
    recorder.lags_from(dataflow.lag_of if dataflow else None)
    lakehouse = Lakehouse.from_env()
    status = service_status.StatusFile(lakehouse)
    own_time = OwnTime()
    keeper = ProgressKeeper(spark, recorder, lakehouse, log)
    served = [*queries, *scheduled]
    names = ", ".join(s.name for s in served)
    log(f"Serving {len(served)} streaming queries ({names}); "
        + (f"{len(scheduled)} of them run each time an input commits; " if scheduled else "")
        + "press Ctrl-C or send SIGTERM to stop them after their current batch.")
    keeper.start()
    # dbt commands of this lakehouse attach to the service's JVM while it serves (driver/)
    host = host_if_none(spark, lakehouse.local, started_conf(), "service", log)
    next_status = time.monotonic()
    poll = min(POLL_SECONDS, DATAFLOW_POLL_SECONDS) if dataflow else POLL_SECONDS
    try:
        with run.display:
            while not stop_requested.is_set():
                for served_query in queries:
                    _supervise(spark, run, served_query, log)
                if dataflow is not None:
                    with own_time.timed("scheduler"):
                        dataflow.step()
                _refuse_if_nothing_serves(queries, dataflow)
                if time.monotonic() >= next_status:
                    with own_time.timed("status file"):
                        status.write(served, own_time=_own_time(recorder, own_time, keeper),
                                     latest=recorder.latest_batch,
                                     totals=recorder.expectation_totals,
                                     store_requests=_store_requests(spark, lakehouse))
                    next_status = time.monotonic() + STATUS_SECONDS
                wake.wait(poll)
                wake.clear()
    finally:
        restore()
        if host is not None:
            host.stop()
        if dataflow is not None:
            dataflow.stop(stop_between_batches)
        stop_between_batches(served_query.query for served_query in queries)
        if signals:
            log(interruption.stopped_message(
                "Ctrl-C" if signals[0] == signal.SIGINT else signal.Signals(signals[0]).name,
                [s.name for s in served],
                " after its current batch" if len(served) == 1 else " after their current batch",
            ))
        keeper.stop()
        recorder.lags_from(None)
        status.write(served, state="stopped", own_time=_own_time(recorder, own_time, keeper),
                     latest=recorder.latest_batch,
                     totals=recorder.expectation_totals,
                     store_requests=_store_requests(spark, lakehouse))
    return [s.name for s in served]


def _store_requests(spark: SparkSession, lakehouse: Lakehouse) -> Optional[dict[str, int]]:
    return hadoop_fs.store_requests(spark, lakehouse.root) if lakehouse.remote else None


def _own_time(recorder: ProgressRecorder, serving: OwnTime, keeper: ProgressKeeper) -> dict:
    return {**recorder.own_time.figures(), **serving.figures(), **keeper.own_time.figures()}


def _supervise(spark: SparkSession, run: StreamingRun, served: ServedQuery, log: Log) -> None:
    """Restart a failed query when its pause is over; forget its failures once it completes a batch."""
    if served.query.isActive:
        if served.failures_in_a_row and served.last_batch() > served.batch_at_restart:
            served.failures_in_a_row = 0
        return
    if served.restart_at is None:
        error = served.query.exception()
        reason = _reason(run, served, error) if error is not None else "it stopped"
        served.failures_in_a_row += 1
        served.last_failure = reason
        log(backoff.failure_said(served.name, reason, served.failures_in_a_row, "Restarting it", "a batch"))
        served.restart_at = time.monotonic() + backoff.pause_after(served.failures_in_a_row)
        return
    if time.monotonic() < served.restart_at:
        return
    if run.served_write(served.name) is None:
        raise StreamingModelError(
            f"Query {served.name} failed ({served.last_failure}) and was not started by this "
            f"run's models, so it cannot be restarted here."
        )
    served.batch_at_restart = served.last_batch()
    served.restart_at = None
    try:
        served.query = run.start_again(served.name, spark)
    except StreamingModelError as error:
        served.query = _FailedStart(served.query, error)  # counted as a failure on the next poll
        return
    served.restarts += 1
    log(f"Query {served.name} restarted (restart {served.restarts}).")


def _refuse_if_nothing_serves(queries: list[ServedQuery], dataflow: Optional[Dataflow]) -> None:
    """Serving goes on while any query or model serves; with every one set aside it cannot."""
    served = [*queries, *(dataflow.models if dataflow is not None else ())]
    if not served or not all(one.set_aside for one in served):
        return
    raise StreamingModelError(
        f"Every served query failed {backoff.MAX_FAILURES_IN_A_ROW} times in a row, so serving "
        "stops: " + "; ".join(f"{one.name}: {one.last_failure}" for one in served)
        + ". Fix the cause, then serve again: each query resumes from its checkpoint.")


def _reason(run: StreamingRun, served: ServedQuery, error: Exception) -> str:
    """What its micro-batch raised, or Spark's error explained; as the run reports it."""
    if isinstance(error, StreamingModelError):  # a restart that failed to start
        return str(error)
    write = run.served_write(served.name)
    return str(failure(write, error)) if write is not None else root_cause(error)


class _FailedStart:
    """Stands in for a query that could not even start, so that it counts as failed."""

    def __init__(self, previous: StreamingQuery, error: Exception):
        self._error = error
        self.isActive = False
        self.recentProgress = previous.recentProgress  # what status and last_batch() read

    def exception(self) -> Exception:
        return self._error

    def stop(self) -> None:
        pass


_served_after_run = False


def serve_after_run() -> None:
    """This process serves the run's queries itself once dbt returns (`dbt-spark-streaming
    serve`), so the end of the run says nothing of serving them."""
    global _served_after_run
    _served_after_run = True


def say_unserved(spark: SparkSession, run: StreamingRun, out: Optional[IO[str]] = None) -> list[str]:
    """At the end of a command whose project has no on-run-end hook serve_streaming_queries():
    the run's processing-time queries still running are not served (a dbt process ends with
    them, and the next run resumes from their checkpoints); the terminal says so once, with how
    to serve them. Returns the models."""
    if run.unserved_said or _served_after_run:
        return []
    kept = set(run.served_names())
    models = sorted({_model_of(run, query.name) for query in spark.streams.active if query.name in kept}
                    | {model.write.model for model in run.scheduled()})
    if models:
        run.unserved_said = True
        print(
            f"{', '.join(models)}: processing_time or on_new_data trigger, but this project does "
            "not serve its "
            "queries after the run: they end with it (the next run resumes from their "
            "checkpoints). To serve them, run `dbt-spark-streaming serve`, or add to dbt_project.yml:\n"
            "  on-run-end:\n    - \"{{ serve_streaming_queries() }}\"",
            file=out or sys.stdout, flush=True,
        )
    return models


def _model_of(run: StreamingRun, query_name: str) -> str:
    """A served query's model (a model's quarantine of unreadable lines is its model's too)."""
    return getattr(run.served_write(query_name), "model", None) or query_name


def stop_all(spark: SparkSession) -> list[str]:
    """Stop every running query between batches; returns their names."""
    queries = list(spark.streams.active)
    stop_between_batches(queries)
    return [q.name for q in queries]


def stop_between_batches(queries: Iterable[StreamingQuery], timeout_seconds: float = 120) -> None:
    """Stop each query once its current micro-batch, if any, has committed."""
    for query in queries:
        deadline = time.monotonic() + timeout_seconds
        while query.isActive and query.status.get("isTriggerActive") and time.monotonic() < deadline:
            time.sleep(0.05)
        query.stop()


def _install_handlers(stop_requested: threading.Event, received: list[int],
                      wake: Optional[threading.Event] = None) -> Callable[[], None]:
    if threading.current_thread() is not threading.main_thread():
        return lambda: None  # only the main thread may set handlers; Ctrl-C still interrupts
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def stop(sig: int, _frame) -> None:
        received.append(sig)
        stop_requested.set()
        if wake is not None:
            wake.set()

    for sig in previous:
        signal.signal(sig, stop)

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore
