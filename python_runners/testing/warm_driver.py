"""`dbt-spark-streaming driver <action>` on the repository's project, as a user types it: for the
tests, the benchmark and the chaos run that start and stop a warm driver."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Mapping

from python_runners import REPO_ROOT
from python_runners.ops.dbt_invocation import PROFILES_DIR

COMMAND = str(Path(sys.executable).with_name("dbt-spark-streaming"))
TIMEOUT = 600  # a bound for a stuck start (the first on a machine fetches jars), not a speed target


def driver_command(action: str, *args: str) -> list[str]:
    return [COMMAND, "driver", action, "--project-dir", str(REPO_ROOT), "--profiles-dir", str(PROFILES_DIR), *args]


def run_driver(action: str, env: Mapping[str, str], *args: str) -> subprocess.CompletedProcess:
    """Run to its end, its output captured as text."""
    return subprocess.run(driver_command(action, *args), env=dict(env), capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=REPO_ROOT)
