"""Running a benchmark step in a process of its own, its output in a log, timed from outside.

A child started with `run_child` can tell how long ago its parent started it
(`seconds_since_spawn`), so its own split (Python's start and imports, ...) adds up to the wall
time the parent measured. `alternating_pairs` runs two sides A B A B ..., each run a fresh process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

SPAWNED_AT = "BENCH_SPAWNED_AT"


def spawned_at() -> float:
    """In a child started by `run_child`: when (epoch seconds) the parent started it."""
    return float(os.environ[SPAWNED_AT])


def seconds_since_spawn() -> float:
    """In a child started by `run_child`: seconds since the parent started it."""
    return time.time() - spawned_at()


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


def module_command(module_args: list[str]) -> list[str]:
    """`python -m <module> <arguments>` with this interpreter."""
    return [sys.executable, "-m", *module_args]


def child_run(module_args: list[str], log: Path, result: Path, env: dict[str, str] | None = None):
    """Run `python -m <module> ... --result <file>` with its output in `log` (in this process's
    environment unless `env`): its wall time from here and its JSON result."""
    wall_s = run_child(module_command([*module_args, "--result", str(result)]),
                       dict(os.environ) if env is None else env, log)
    return wall_s, json.loads(result.read_text())


def child_result(module_args: list[str], log: Path, result: Path, env: dict[str, str] | None = None):
    """`child_run`'s JSON result."""
    return child_run(module_args, log, result, env)[1]


def timed_child(module_args: list[str], env: dict[str, str], log: Path, result: Path) -> dict:
    """`child_run`'s JSON result with its wall time as `wall_s`."""
    wall_s, found = child_run(module_args, log, result, env)
    return {"wall_s": wall_s, **found}


def alternating_pairs(sides: dict[str, str], pairs: int, label: str,
                      run_side: Callable[[str, str, int], dict]) -> dict[str, list[dict]]:
    """`pairs` runs of each side, in the order A B A B ...: run_side(side, module, run number)
    gives a run's result (with its `wall_s`); each is printed as `<label> <n>/<pairs> <side>`."""
    runs: dict[str, list[dict]] = {side: [] for side in sides}
    for pair in range(1, pairs + 1):
        for side, module in sides.items():
            runs[side].append(run_side(side, module, pair))
            print(f"  {label} {pair}/{pairs} {side}: {runs[side][-1]['wall_s']:.1f} s", flush=True)
    return runs
