"""dbt as a process of its own, as a user types it: the repository's profiles, the env's lakehouse.

In-process dbt (one JVM for every invocation) is python_runners.ops.dbt_invocation's; this is
for runs that must be killed, interrupted or kept apart (a Derby metastore admits one JVM).
dbt's target and logs go to a folder of the caller's, never into the repository.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Mapping, Sequence

from python_runners.ops.dbt_invocation import PROFILES_DIR, target_args
from python_runners import REPO_ROOT

DBT = str(Path(sys.executable).with_name("dbt"))


def dbt_command(args: Sequence[str], target: Path | str, project_dir: Path | str = REPO_ROOT) -> list[str]:
    """`dbt <args>` on `project_dir` (the repository's by default) with the repository's profiles."""
    return [DBT, *args, "--project-dir", str(project_dir), "--profiles-dir", str(PROFILES_DIR),
            *target_args(target)]


def run_dbt_process(
    args: Sequence[str], env: Mapping[str, str], target: Path | str,
    project_dir: Path | str = REPO_ROOT, timeout: float = 300,
) -> subprocess.CompletedProcess:
    """Run it to the end, its output captured as text."""
    return subprocess.run(dbt_command(args, target, project_dir), env=dict(env), capture_output=True,
                          text=True, timeout=timeout, cwd=REPO_ROOT)
