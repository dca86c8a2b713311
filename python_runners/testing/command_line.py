"""`python -m python_runners <command> ...` (the service, the cluster, lint, chaos) from another process."""

from __future__ import annotations

import subprocess
import sys
from typing import Mapping, Sequence

from python_runners import REPO_ROOT


def python_runners_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "python_runners", *args]


def run_command_line(
    args: Sequence[str], env: Mapping[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """Run it to the end from the repository, its output captured as text (env None: this one's)."""
    return subprocess.run(
        python_runners_command(*args), env=None if env is None else dict(env),
        capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT,
    )
