"""Part 6 of `make bench`, run cost: what a run costs beyond the work it has to do.

- no-op: the demo's `dbt run` after everything is built, so nothing is new (bench/run_cost/noop_run.py),
  against a bare Spark session start plus `show tables` (bench/run_cost/session_start.py); fresh
  processes in the order A B A B ..., on one lakehouse, timed from here; each side's split in phases.
- 1% new and first run over history: part 1's results (bench/recompute/).
- dbt vs hand-written: part 2's results (bench/overhead/).
Parts 1 and 2 are measured here only when this run did not measure them already.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from bench.harness.child_process import alternating_pairs, module_command, run_child, timed_child
from bench.harness.fresh_lakehouse import empty_folder
from bench.harness.run import Run
from python_runners.testing.separate_lakehouse import separate_lakehouse_env

NOOP_SIDES = {"dbt_run": "bench.run_cost.noop_run", "session_start": "bench.run_cost.session_start"}


def measure_noop(pairs: int, log_dir: Path) -> dict:
    lakehouse, target = empty_folder("run_cost_noop"), empty_folder("run_cost_noop_target")
    env = separate_lakehouse_env(lakehouse)
    setup_s = run_child(module_command([NOOP_SIDES["dbt_run"], "--setup", "--target-path", str(target)]),
                        env, log_dir / "run_cost_noop_setup.log")
    print(f"  no-op setup (land a batch, `dbt build` of seed and models): {setup_s:.1f} s", flush=True)

    def run_side(side: str, module: str, pair: int) -> dict:
        arguments = ["--target-path", str(target)] if side == "dbt_run" else []
        return timed_child([module, *arguments], env, log_dir / f"run_cost_{side}_{pair}.log",
                           target / f"{side}_{pair}.json")

    runs = alternating_pairs(NOOP_SIDES, pairs, "no-op pair", run_side)
    return {"pairs": pairs, "setup_s": setup_s, "runs": runs}


def measure_run_cost(
    noop_pairs: int, log_dir: Path, command: str, quick: str | None,
    earlier: dict, measure: dict[str, Callable[[], object]],
) -> dict:
    """`earlier`: this run's results of parts 1 and 2, where it measured them; `measure` measures
    each of them (as `recompute` and `overhead`) where it did not."""
    run = Run(command, quick=quick)
    result = run.record
    result.update({"noop": measure_noop(noop_pairs, log_dir), "measured_here": []})
    for name in ("recompute", "overhead"):
        if earlier.get(name):
            result[name] = earlier[name]
        else:
            print(f"  run cost: {name} ...", flush=True)
            result[name] = measure[name]()
            result["measured_here"].append(name)
    return run.end()
