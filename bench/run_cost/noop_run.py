"""Run-cost part, no-op side A: the demo's `dbt run` when nothing is new, in a process of its own.

--select: only those models (the measured runs select the demo's streaming and cdc models);
--land-recordings N: land N new recordings first (the demo's generator; its time is `land_s`,
not part of the run): the 1% side of one_pct_over_noop.

With --setup (not measured): lands one batch of the demo's data and runs `dbt build` of the seed
and the models (no data tests), then `dbt run` once, so every `dbt run` after it has nothing new to read
and nothing left over from the first. Without: one `dbt run`
of all the demo's models, as a user types it, and its split written to --result: Python's start
and imports (from the moment the parent started this process), the Spark session's start
(dbt_spark_streaming.session.startup_seconds, 0 when the run started none), each model's execution and
the on-run-end hooks (dbt's run results), and dbt's whole time (parse, compile and the rest are
what it holds beyond those).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench.harness.child_process import seconds_since_spawn, spawned_at
from bench.harness.dbt_timing import node_seconds
from dbt_spark_streaming import session
from python_runners.ops.dbt_invocation import run_dbt, target_args


def main(argv: list[str] | None = None) -> int:
    main_started = time.time()
    parser = argparse.ArgumentParser(prog="python -m bench.run_cost.noop_run")
    parser.add_argument("--target-path", required=True)
    parser.add_argument("--setup", action="store_true")
    parser.add_argument("--result", type=Path)
    parser.add_argument("--select", nargs="*", default=[])
    parser.add_argument("--land-recordings", type=int, default=0)
    args = parser.parse_args(argv)
    imports_s = main_started - spawned_at()
    paths = target_args(args.target_path)
    if args.setup:
        from python_runners.demo.pipeline import land

        land()
        run_dbt(["build", "--resource-type", "seed", "--resource-type", "model", *paths])
        # Once more, so each stateful model has run its one empty batch after reading its input's
        # initial snapshot (initial_snapshot.py): every measured run is then a steady one.
        run_dbt(["run", *paths])
        return 0

    land_s = 0.0
    if args.land_recordings:
        from python_runners.demo.data import land_batch

        landing_started = time.perf_counter()
        land_batch(records=args.land_recordings, files=max(1, args.land_recordings // 100_000))
        land_s = time.perf_counter() - landing_started
    result = run_dbt(["run", *(["--select", *args.select] if args.select else []), *paths])
    dbt_s = seconds_since_spawn() - imports_s - land_s
    nodes = result.result.results
    args.result.write_text(json.dumps({
        "imports_s": imports_s,
        "land_s": land_s,
        "session_s": getattr(session, "startup_seconds", None) or 0.0,
        "dbt_s": dbt_s,
        "models_s": {node.node.name: node_seconds(node)
                     for node in nodes if node.node.resource_type == "model"},
        "hooks_s": sum(node_seconds(node, "compile", "execute")
                       for node in nodes if node.node.resource_type == "operation"),
        "inside_s": seconds_since_spawn(),
    }, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
