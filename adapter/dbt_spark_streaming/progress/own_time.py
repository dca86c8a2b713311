"""Time the service's own Python code takes while streams run: the progress listener, the
progress-table flush and the status file. `dbt-spark-streaming status` and the latency benchmark show it, so
that a slow batch can be told apart from a slow supervisor."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator


class OwnTime:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[str, int] = {}
        self._seconds: dict[str, float] = {}

    @contextmanager
    def timed(self, activity: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            spent = time.perf_counter() - started
            with self._lock:
                self._calls[activity] = self._calls.get(activity, 0) + 1
                self._seconds[activity] = self._seconds.get(activity, 0.0) + spent

    def figures(self) -> dict[str, dict[str, float]]:
        """{activity: {"calls": n, "ms": total milliseconds}}"""
        with self._lock:
            return {
                activity: {"calls": calls, "ms": round(self._seconds[activity] * 1000, 1)}
                for activity, calls in self._calls.items()
            }
