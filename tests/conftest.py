"""One Spark session (one JVM, one Derby metastore) per pytest process, in a lakehouse of its own:
a tier run on two workers (pytest-xdist, the Makefile) has two, which share nothing.

dbt runs in-process through dbtRunner, so every dbt invocation in the suite reuses that session.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

# Before anything imports the session: the suite never touches the developer's .lakehouse/.
_LAKEHOUSE = Path(tempfile.mkdtemp(prefix="lakehouse-tests-"))
os.environ["LAKEHOUSE_DIR"] = str(_LAKEHOUSE)
os.environ.setdefault("SPARK_SHUFFLE_PARTITIONS", "2")
# The jars `make setup` fetched into the repository, as `make test` says too.
os.environ.setdefault("SPARK_EXTRA_JARS_DIR", str(Path(__file__).resolve().parents[1] / ".jars"))

from python_runners.ops.dbt_invocation import invoke_dbt, target_args  # noqa: E402
from dbt_spark_streaming.lakehouse import Lakehouse  # noqa: E402
from dbt_spark_streaming.session import get_or_create_session  # noqa: E402


@pytest.fixture(scope="session")
def lakehouse() -> Lakehouse:
    return Lakehouse.from_env()


@pytest.fixture(scope="session")
def spark(lakehouse):
    session = get_or_create_session(lakehouse)
    yield session
    session.stop()
    shutil.rmtree(_LAKEHOUSE, ignore_errors=True)


@pytest.fixture(scope="session")
def dbt(spark, tmp_path_factory):
    """Run a dbt command in this process; returns dbt's result (success, per-node results).

    Each project keeps a target folder of its own for the whole session, so dbt's partial parse
    of a project carries over from one command to the next instead of parsing it all again. The
    tests read what a command did from its result, so dbt writes no manifest.json or
    run_results.json (half a second a command) unless a test asks with `--write-json`."""
    targets: dict[str, Path] = {}

    def run(*args: str, project_dir: str | None = None):
        key = str(Path(project_dir).resolve()) if project_dir else ""
        if key not in targets:
            targets[key] = tmp_path_factory.mktemp("dbt-target")
        artifacts = [] if "--write-json" in args else ["--no-write-json"]
        return invoke_dbt([*args, *artifacts, *target_args(targets[key])], project_dir)

    return run


# dbt's adapter test suite (tests/adapter/) brings its fixtures from this plugin.
pytest_plugins = ["dbt.tests.fixtures.project"]
