"""Keep processing-time streams serving until Ctrl-C or SIGTERM, then stop each one cleanly."""

from __future__ import annotations

import signal
import threading
import time
from typing import Callable, Iterable

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

POLL_SECONDS = 0.5


def serve_until_stopped(spark: SparkSession, log: Callable[[str], None] = print) -> list[str]:
    """Block while streaming queries run; on a signal stop them between batches.

    Returns the names of the queries that were stopped. A query that fails while serving ends
    the wait with its error, after the others are stopped.
    """
    queries = list(spark.streams.active)
    if not queries:
        return []
    stop_requested = threading.Event()
    restore = _install_handlers(stop_requested)
    log(f"Serving {len(queries)} streaming queries ({', '.join(q.name for q in queries)}); "
        "press Ctrl-C or send SIGTERM to stop them after their current batch.")
    try:
        while not stop_requested.is_set() and all(q.isActive for q in queries):
            stop_requested.wait(POLL_SECONDS)
    finally:
        restore()
        stop_between_batches(queries)
    failed = [q for q in queries if q.exception() is not None]
    if failed:
        raise failed[0].exception()
    return [q.name for q in queries]


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


def _install_handlers(stop_requested: threading.Event) -> Callable[[], None]:
    if threading.current_thread() is not threading.main_thread():
        return lambda: None  # only the main thread may set handlers; Ctrl-C still interrupts
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, lambda *_: stop_requested.set())

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore
