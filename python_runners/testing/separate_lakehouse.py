"""A lakehouse of its own for a process started from a test, the chaos run or a benchmark.

The embedded Derby metastore admits one JVM at a time, so a dbt run or the service started as a
process works on a lakehouse apart from its parent's: every part of it under one new folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from dbt_spark_streaming.lakehouse import ROOT_VARIABLE

_LAKEHOUSE_VARIABLES = "LAKEHOUSE_"  # LAKEHOUSE_DIR, its parts (LAKEHOUSE_*_DIR), the metastore URL


def separate_lakehouse_env(
    root: Path | str, environ: Mapping[str, str] = os.environ, **variables: str
) -> dict[str, str]:
    """`environ` with LAKEHOUSE_DIR at `root` and none of the inherited lakehouse variables (no part
    of the parent's lakehouse leaks in), then `variables` (e.g. LAKEHOUSE_LANDING_DIR) on top."""
    env = {name: value for name, value in environ.items() if not name.startswith(_LAKEHOUSE_VARIABLES)}
    env[ROOT_VARIABLE] = str(root)
    env.update(variables)
    return env


def use_separate_lakehouse(root: Path | str) -> None:
    """Point this process at the lakehouse under `root` (os.environ as separate_lakehouse_env has
    it); before anything here builds a Spark session, which reads the lakehouse once."""
    env = separate_lakehouse_env(root)
    os.environ.clear()
    os.environ.update(env)
