"""tests/processes: what needs processes of its own (`make test-processes`): runs SIGKILLed on a
commit, the always-on service, a Spark cluster, a Kafka broker, the chaos run, commands as users
type them and the installed package.

The drivers started here live seconds to a minute on small data, so they compile with C1 only
(Spark's SPARK_SUBMIT_OPTS, which every process a test starts inherits, unless it is set
already): a short process spends its CPU in the JIT, and the 2 cores are the suite's limit.
jvm_options.py says why the session tier and users' long-lived drivers keep the default.
"""

from __future__ import annotations

import os

import pytest

C1_ONLY = "-XX:TieredStopAtLevel=1"


@pytest.fixture(scope="session", autouse=True)
def short_lived_drivers_compile_with_c1_only():
    with pytest.MonkeyPatch.context() as patch:
        if "SPARK_SUBMIT_OPTS" not in os.environ:
            patch.setenv("SPARK_SUBMIT_OPTS", C1_ONLY)
        yield
