"""tests/unit: the tier without a JVM (`make test-unit`). Nothing here starts Spark, runs dbt or
starts any process.

The root conftest's fixtures are lazy, so these tests never start a session as long as they do
not ask for one; asking for `spark` or `dbt` here fails at once instead of starting a JVM.
"""

from __future__ import annotations

import os

import pytest
from pyspark import SparkContext

from process_guard import refuse_processes

NO_JVM = "tests/unit runs without a JVM; a test that needs Spark or dbt belongs in tests/."


@pytest.fixture(scope="session")
def spark():
    pytest.fail(NO_JVM)


@pytest.fixture(scope="session")
def dbt():
    pytest.fail(NO_JVM)


@pytest.fixture(scope="session")
def matplotlib_fonts():
    """matplotlib lists the machine's fonts with fc-list the first time it draws on a machine,
    then keeps the list in its cache: done before any test's guard, so that a test that draws
    does not start a process."""
    import matplotlib.font_manager  # noqa: F401


@pytest.fixture(autouse=True)
def no_process_started(monkeypatch):
    refuse_processes(monkeypatch, "tests/unit")


@pytest.fixture(autouse=True)
def no_jvm_started():
    had_jvm = SparkContext._gateway is not None  # a whole-suite run may have one already
    yield
    assert had_jvm or SparkContext._gateway is None, NO_JVM


@pytest.fixture(scope="session", autouse=True)
def remove_the_unused_test_lakehouse():
    """The root conftest creates the suite's lakehouse folder on import; only the `spark` fixture
    removes it. Without Spark it stays empty, and is removed here."""
    yield
    try:
        os.rmdir(os.environ["LAKEHOUSE_DIR"])
    except OSError:
        pass  # not empty: Spark ran in this session, and the spark fixture removes it
