"""Running a benchmark step in a process of its own, its output in a log, timed from outside.

A child started with `spawn_env` can tell how long ago its parent started it
(`seconds_since_spawn`), so its own split (Python's start and imports, ...) adds up to the wall
time the parent measured.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

SPAWNED_AT = "BENCH_SPAWNED_AT"


def seconds_since_spawn() -> float:
    """In a child started by `run_child`: seconds since the parent started it."""
    return time.time() - float(os.environ[SPAWNED_AT])


def run_child(command: list[str], env: dict[str, str], log_path: Path) -> float:
    """Run `command` with its output in `log_path`; raises when it fails. Its wall time in seconds."""
    with open(log_path, "w") as log:
        started = time.perf_counter()
        finished = subprocess.run(command, env={**env, SPAWNED_AT: repr(time.time())},
                                  stdout=log, stderr=subprocess.STDOUT)
        wall_s = time.perf_counter() - started
    if finished.returncode != 0:
        raise RuntimeError(f"`{' '.join(command[:4])} ...` failed ({finished.returncode}); see {log_path}")
    return wall_s


def child_result(module_args: list[str], log: Path, result: Path):
    """Run `python -m <module> ... --result <file>` with its output in `log`; its JSON result."""
    run_child([sys.executable, "-m", *module_args, "--result", str(result)], dict(os.environ), log)
    return json.loads(result.read_text())
