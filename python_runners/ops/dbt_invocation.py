"""Run dbt commands in this process, so that they all share one Spark JVM."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional, Sequence

from dbt.cli.main import dbtRunnerResult
from dbt_common.events.base_types import EventMsg

from dbt_spark_streaming.commands import dbt as package_dbt
from dbt_spark_streaming.commands.dbt import describe_failure
from dbt_spark_streaming.commands.project import DbtOptions
from python_runners import REPO_ROOT
from python_runners.ops.package_command import PROFILES_DIR

__all__ = ["PROFILES_DIR", "describe_failure", "invoke_dbt", "run_dbt", "target_args"]


def target_args(folder: Path | str) -> list[str]:
    """dbt's target (manifest, run results) and its log file, both in `folder`."""
    return ["--target-path", str(folder), "--log-path", str(folder)]


def invoke_dbt(
    args: Sequence[str], project_dir: str | None = None,
    callbacks: Optional[Sequence[Callable[[EventMsg], None]]] = None,
) -> dbtRunnerResult:
    """The package's in-process dbt (commands/dbt.py) on this repository's project (or
    `project_dir`) and profiles (unless `args` name others); `callbacks` hear each of dbt's
    events (e.g. NodeStart), in the thread that fires it."""
    profiles = None if "--profiles-dir" in args else str(PROFILES_DIR)
    return package_dbt.invoke(args, DbtOptions(str(project_dir or REPO_ROOT), profiles), callbacks)


def run_dbt(args: Sequence[str], project_dir: str | None = None) -> dbtRunnerResult:
    """Like invoke_dbt, but a failed command raises with dbt's own reason."""
    result = invoke_dbt(args, project_dir)
    if not result.success:
        raise RuntimeError(f"`dbt {' '.join(args)}` failed: {describe_failure(result)}")
    return result
