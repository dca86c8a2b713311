"""tests/session: one JVM per worker, dbt in-process (`make test-session`). Nothing here starts a
process.

Every dbt command runs in this process on its one Spark session (the root conftest), so a
test here costs what its work costs. A test that needs a process of its own (a kill, a service,
a command as users type it) belongs in tests/processes/; starting one here fails at once.
"""

from __future__ import annotations

import os

import pytest

from process_guard import refuse_processes

PARALLEL_GC = "-XX:+UseParallelGC"


@pytest.fixture(scope="session", autouse=True)
def the_jvm_collects_with_parallel_gc():
    """Set before the `spark` fixture starts this process's JVM (a session-scoped autouse fixture
    comes first), and only for this tier, as tests/processes/ sets its drivers' options. Parallel
    GC, not G1: G1's concurrent marking took about a tenth of the tier's CPU, and `make test` runs
    this tier on two workers that share the 2 cores (-n 2 in the Makefile): measured on 8 of its
    files, 386 -> 354 s. A user's long-lived driver keeps Java's default (short pauses); a test
    pays for throughput only."""
    with pytest.MonkeyPatch.context() as patch:
        if "SPARK_SUBMIT_OPTS" not in os.environ:
            patch.setenv("SPARK_SUBMIT_OPTS", PARALLEL_GC)
        yield


@pytest.fixture(autouse=True)
def no_process_started(monkeypatch):
    # The exceptions: pyspark starting the suite's one JVM, the first time a test asks for it, and
    # Python's platform module asking `uname -p` once, for dbt's invocation context.
    refuse_processes(monkeypatch, "tests/session", allowed=("spark-submit", "uname"))
