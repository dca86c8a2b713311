"""tests/session: one JVM, dbt in-process (`make test-session`). Nothing here starts a process.

Every dbt command runs in this process on the suite's one Spark session (the root conftest), so a
test here costs what its work costs. A test that needs a process of its own (a kill, a service,
a command as users type it) belongs in tests/processes/; starting one here fails at once.
"""

from __future__ import annotations

import subprocess

import pytest

IN_PROCESS = ("tests/session runs in one process; a test that starts a process belongs in "
              "tests/processes/ (started here: {command})")
_SPARKS_OWN = "spark-submit"  # pyspark starting the suite's one JVM, the first time it is asked for


@pytest.fixture(autouse=True)
def no_process_started(monkeypatch):
    started = subprocess.Popen.__init__

    def refuse(self, args, *more, **options):
        command = [args] if isinstance(args, (str, bytes)) else list(args)
        if not any(_SPARKS_OWN in str(part) for part in command[:1]):
            raise AssertionError(IN_PROCESS.format(command=" ".join(map(str, command))[:200]))
        started(self, args, *more, **options)

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
