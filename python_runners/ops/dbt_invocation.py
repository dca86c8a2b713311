"""Run dbt commands in this process, so that they all share one Spark JVM."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable, Optional, Sequence

from dbt.cli.main import dbtRunner, dbtRunnerResult
from dbt_common.events.base_types import EventMsg

from python_runners import REPO_ROOT

PROFILES_DIR = REPO_ROOT / "profiles"


def target_args(folder: Path | str) -> list[str]:
    """dbt's target (manifest, run results) and its log file, both in `folder`."""
    return ["--target-path", str(folder), "--log-path", str(folder)]


def invoke_dbt(
    args: Sequence[str], project_dir: str | None = None,
    callbacks: Optional[Sequence[Callable[[EventMsg], None]]] = None,
) -> dbtRunnerResult:
    """`callbacks` hear each of dbt's events (e.g. NodeStart), in the thread that fires it."""
    full_args = [*args, "--project-dir", str(project_dir or REPO_ROOT)]
    if "--profiles-dir" not in args:
        full_args += ["--profiles-dir", str(PROFILES_DIR)]
    return dbtRunner(callbacks=list(callbacks or [])).invoke(full_args)


def run_dbt(args: Sequence[str], project_dir: str | None = None) -> dbtRunnerResult:
    """Like invoke_dbt, but a failed command raises with dbt's own reason."""
    result = invoke_dbt(args, project_dir)
    if not result.success:
        raise RuntimeError(f"`dbt {' '.join(args)}` failed: {describe_failure(result)}")
    return result


def describe_failure(result: dbtRunnerResult, fallback: str = "see the log above") -> str:
    """Why a dbt command failed: its exception, or each failed node's (or operation's) message."""
    if result.exception is not None:
        return str(result.exception)
    outcome = getattr(result.result, "results", None)
    messages = []
    for r in (result.result or []) if outcome is None else outcome:
        node = getattr(r, "node", None)  # a run's results have one; a run-operation's do not
        if not getattr(r, "message", None) or (node is not None and r.status not in ("error", "fail")):
            continue
        messages.append(f"{node.name}: {r.message}" if node is not None else str(r.message))
    return "; ".join(messages) or fallback


def run_operation_command(command: Sequence[str], project_dir: str | None) -> int:
    """A `python -m python_runners` command that is a dbt run-operation: its exit status, its
    failure said on stderr (an error inside the operation dbt has printed already)."""
    result = invoke_dbt(list(command), project_dir)
    if result.success:
        return 0
    failure = describe_failure(result, fallback="")
    if failure:
        print(failure, file=sys.stderr)
    return 1
