"""Part 6 of `make bench`, run cost: what a run costs beyond the work it has to do.

- no-op: the demo's `dbt run` after everything is built, so nothing is new (bench/noop_run.py),
  against a bare Spark session start plus `show tables` (bench/session_start.py); fresh processes
  in the order A B A B ..., on one lakehouse, timed from here; each side's split in phases.
- 1% new and first run over history: part 1's results (bench/incremental_vs_recompute.py).
- dbt vs hand-written: part 2's results (bench/overhead.py).
Parts 1 and 2 are measured here only when this run did not measure them already.
"""

from __future__ import annotations

import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from bench.child_process import run_child
from bench.fresh_lakehouse import empty_folder
from bench.machine import load_average
from python_runners.testing.separate_lakehouse import separate_lakehouse_env

NOOP_SIDES = {"dbt_run": "bench.noop_run", "session_start": "bench.session_start"}


def measure_noop(pairs: int, log_dir: Path) -> dict:
    lakehouse, target = empty_folder("run_cost_noop"), empty_folder("run_cost_noop_target")
    env = separate_lakehouse_env(lakehouse)
    setup_s = run_child([sys.executable, "-m", NOOP_SIDES["dbt_run"], "--setup", "--target-path", str(target)],
                        env, log_dir / "run_cost_noop_setup.log")
    print(f"  no-op setup (land a batch, `dbt build` of seed and models): {setup_s:.1f} s", flush=True)
    runs: dict[str, list[dict]] = {side: [] for side in NOOP_SIDES}
    for pair in range(pairs):
        for side, module in NOOP_SIDES.items():
            result = target / f"{side}_{pair + 1}.json"
            command = [sys.executable, "-m", module, "--result", str(result)]
            if side == "dbt_run":
                command += ["--target-path", str(target)]
            wall_s = run_child(command, env, log_dir / f"run_cost_{side}_{pair + 1}.log")
            runs[side].append({"wall_s": wall_s, **json.loads(result.read_text())})
            print(f"  no-op pair {pair + 1}/{pairs} {side}: {wall_s:.1f} s", flush=True)
    return {"pairs": pairs, "setup_s": setup_s, "runs": runs}


def measure_run_cost(
    noop_pairs: int, log_dir: Path, command: str, quick: str | None,
    earlier: dict, measure: dict[str, Callable[[], object]],
) -> dict:
    """`earlier`: this run's results of parts 1 and 2, where it measured them; `measure` measures
    each of them (as `recompute` and `overhead`) where it did not."""
    started = time.monotonic()
    result = {"started_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M"), "command": command,
              "quick": quick, "load_start": load_average(), "noop": measure_noop(noop_pairs, log_dir),
              "measured_here": []}
    for name in ("recompute", "overhead"):
        if earlier.get(name):
            result[name] = earlier[name]
        else:
            print(f"  run cost: {name} ...", flush=True)
            result[name] = measure[name]()
            result["measured_here"].append(name)
    result["duration_min"] = (time.monotonic() - started) / 60
    result["load_end"] = load_average()
    return result
