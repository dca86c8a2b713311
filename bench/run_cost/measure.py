"""Part 6 of `make bench`, run cost: what a run costs beyond the work it has to do.

- no-op: the demo's `dbt run` of its streaming and cdc models after everything is built, so
  nothing is new (bench/run_cost/noop_run.py), against the project's session start plus `show
  tables` (bench/run_cost/session_start.py), the same without the class-data archive (the JVM
  before adapter/dbt_spark_streaming/jvm_options.py) and a plain PySpark session with Delta and Hive
  (bench/run_cost/plain_start.py); fresh processes in the order A B C D A B C D ..., on one
  lakehouse, timed from here; each side's split in phases.
- 1% new: on the same lakehouse, 1,000,000 recordings of history landed and run once through
  bronze_recordings -> silver_recordings -> device_counts (complete), then a fresh `dbt run` of
  those three with 10,000 new against a fresh one with nothing new, alternating.
- attached: the no-op and 1% runs again, attached to a warm driver on the same lakehouse, the
  driver's memory over 200 attached runs, and `dbt show` while the service serves
  (bench/run_cost/attached.py).
- cdc: `python -m bench.cdc` with 1,000 changes per batch into 1,000,000 keys.
- 1% new and first run over history: part 1's results (bench/recompute/).
- dbt vs hand-written: part 2's results (bench/overhead/).
Parts 1 and 2 are measured here only when this run did not measure them already.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from bench.harness.child_process import alternating_pairs, child_run, module_command, run_child, timed_child
from bench.harness.fresh_lakehouse import empty_folder
from bench.harness.run import Run
from bench.run_cost.attached import measure_attached
from dbt_spark_streaming.jvm_options import SHARING_VARIABLE
from python_runners.testing.separate_lakehouse import separate_lakehouse_env

NOOP_RUN = "bench.run_cost.noop_run"
NOOP_SIDES = {"dbt_run": NOOP_RUN, "session_start": "bench.run_cost.session_start",
              "session_start_no_archive": "bench.run_cost.session_start",
              "plain_start": "bench.run_cost.plain_start"}
SIDE_ENV = {"session_start_no_archive": {SHARING_VARIABLE: "off"}}
STREAMING_MODELS = ["config.materialized:streaming_table", "config.materialized:cdc_table"]
HISTORY_ROWS, NEW_ROWS = 1_000_000, 10_000
# The 1% runs: JSON files -> bronze -> silver -> a complete-mode gold, as a user would run one path.
THREE_MODELS = ["bronze_recordings", "silver_recordings", "device_counts"]
CDC_KEYS, CDC_CHANGES = 1_000_000, 1_000
ATTACHED_MEMORY_RUNS = 200  # the warm driver's memory after this many attached runs (against 10)


def measure_noop(pairs: int, log_dir: Path, memory_runs: int = ATTACHED_MEMORY_RUNS) -> dict:
    lakehouse, target = empty_folder("run_cost_noop"), empty_folder("run_cost_noop_target")
    env = separate_lakehouse_env(lakehouse)
    setup_s = run_child(module_command([NOOP_RUN, "--setup", "--target-path", str(target)]),
                        env, log_dir / "run_cost_noop_setup.log")
    print(f"  no-op setup (land a batch, `dbt build` of seed and models): {setup_s:.1f} s", flush=True)

    def run_side(side: str, module: str, pair: int) -> dict:
        arguments = {"dbt_run": ["--target-path", str(target), "--select", *STREAMING_MODELS],
                     "plain_start": ["--folder", str(lakehouse / "plain")]}.get(side, [])
        return timed_child([module, *arguments], {**env, **SIDE_ENV.get(side, {})},
                           log_dir / f"run_cost_{side}_{pair}.log", target / f"{side}_{pair}.json")

    runs = alternating_pairs(NOOP_SIDES, pairs, "no-op pair", run_side)
    one_pct = measure_one_pct(pairs, log_dir, env, target)
    three = ["--target-path", str(target), "--select", *THREE_MODELS]
    attached = measure_attached(pairs, memory_runs, log_dir, env, target, (
        "noop_attached", ["--target-path", str(target), "--select", *STREAMING_MODELS]), {
        "one_pct_attached": [*three, "--land-recordings", str(NEW_ROWS)],
        "noop_three_attached": three,
    })
    return {"pairs": pairs, "setup_s": setup_s, "runs": runs, "one_pct": one_pct, "attached": attached}


def measure_one_pct(pairs: int, log_dir: Path, env: dict, target: Path) -> dict:
    """On the no-op's lakehouse: history landed and run (not measured), then fresh runs with 1%
    new and with nothing new, alternating."""
    history = [NOOP_RUN, "--target-path", str(target), "--select", *THREE_MODELS]
    setup_s = run_child(module_command([*history, "--land-recordings", str(HISTORY_ROWS),
                                        "--result", str(target / "history.json")]),
                        env, log_dir / "run_cost_history.log")
    print(f"  1% new setup ({HISTORY_ROWS:,} recordings landed and run): {setup_s:.1f} s", flush=True)

    def run_side(side: str, module: str, pair: int) -> dict:
        landing = ["--land-recordings", str(NEW_ROWS)] if side == "one_pct" else []
        return timed_child([*history, *landing], env, log_dir / f"run_cost_{side}_{pair}.log",
                           target / f"{side}_{pair}.json")

    runs = alternating_pairs({"one_pct": NOOP_RUN, "noop": NOOP_RUN}, pairs, "1% new pair", run_side)
    return {"history_rows": HISTORY_ROWS, "new_rows": NEW_ROWS, "setup_s": setup_s, "runs": runs}


def measure_cdc(log_dir: Path) -> dict:
    """1,000 changes a batch into 1,000,000 keys, SCD1 and SCD2 (bench/cdc/)."""
    result = log_dir / "run_cost_cdc.json"
    wall_s, found = child_run(["bench.cdc", "--keys", str(CDC_KEYS), "--changed-keys", str(CDC_CHANGES),
                               "--batches", "3", "--no-doc"], log_dir / "run_cost_cdc.log", result)
    print(f"  cdc: {CDC_CHANGES:,} changes into {CDC_KEYS:,} keys: {wall_s:.1f} s", flush=True)
    return found


def measure_run_cost(
    noop_pairs: int, log_dir: Path, command: str, quick: str | None,
    earlier: dict, measure: dict[str, Callable[[], object]],
) -> dict:
    """`earlier`: this run's results of parts 1 and 2, where it measured them; `measure` measures
    each of them (as `recompute` and `overhead`) where it did not, but in quick mode (within
    about 10 minutes: the fixed cost alone)."""
    run = Run(command, quick=quick)
    result = run.record
    result.update({"noop": measure_noop(noop_pairs, log_dir), "cdc_1k": measure_cdc(log_dir),
                   "measured_here": []})
    for name in ("recompute", "overhead"):
        if earlier.get(name):
            result[name] = earlier[name]
        elif not quick:
            print(f"  run cost: {name} ...", flush=True)
            result[name] = measure[name]()
            result["measured_here"].append(name)
    return run.end()
