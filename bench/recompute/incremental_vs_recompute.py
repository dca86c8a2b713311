"""Part 1 of `make bench`, for one history size H, in a process of its own.

Writes H events, builds the three variants of project.py's project over them (not measured), then
for each round appends H/100 new events and times one `dbt run` of each variant (alternating the
order between rounds). At the end the three gold tables must hold the same rows.

    .venv/bin/python -m bench.recompute.incremental_vs_recompute --history 1000000 --rounds 2
        --result out.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench.harness.dbt_timing import node_seconds
from bench.harness.fresh_lakehouse import bench_folder, fresh_session
from bench.harness.tables import rows_only_in_each
from bench.recompute.events import append_events, warm_up_jvm
from bench.recompute.project import EVENTS_FOLDER, VARIANTS, gold_table, write_project

NEW_SHARE = 0.01


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.recompute.incremental_vs_recompute")
    parser.add_argument("--history", type=int, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--result", type=Path, required=True)
    args = parser.parse_args(argv)

    name = f"recompute_{args.history}"
    spark, lakehouse = fresh_session(name)
    from python_runners.ops.dbt_invocation import run_dbt

    project = write_project(bench_folder(name) / "project")
    events_path = lakehouse.landing_path(EVENTS_FOLDER)

    def run_variant(variant: str) -> dict:
        started = time.perf_counter()
        result = run_dbt(["run", "--select", f"path:models/{variant}"], str(project))
        wall = time.perf_counter() - started
        return {"wall_s": wall, "execute_s": sum(node_seconds(node) for node in result.result.results)}

    started = time.perf_counter()
    append_events(spark, events_path, 0, args.history)
    history_write_s = time.perf_counter() - started
    print(f"H={args.history}: history written in {history_write_s:.1f} s", flush=True)
    # Whichever variant ran first would pay alone for dbt's first parse of the project, the
    # metastore client's start and the JVM's warm-up (seconds): done before any first run is
    # timed, as a user's second command finds them.
    run_dbt(["parse"], str(project))
    spark.sql("show databases").collect()
    warm_up_jvm(spark, lakehouse.landing_path("jvm_warm_up"))
    first_runs = {variant: run_variant(variant) for variant in VARIANTS}

    new_rows = max(1, round(args.history * NEW_SHARE))
    next_event = args.history
    runs: dict[str, list[dict]] = {variant: [] for variant in VARIANTS}
    for round_number in range(args.rounds):
        append_events(spark, events_path, next_event, new_rows)
        next_event += new_rows
        order = VARIANTS if round_number % 2 == 0 else tuple(reversed(VARIANTS))
        for variant in order:
            runs[variant].append(run_variant(variant))
        print(f"H={args.history} round {round_number + 1}: " + ", ".join(
            f"{variant} {runs[variant][-1]['wall_s']:.1f} s" for variant in VARIANTS), flush=True)

    differences = gold_differences(spark)
    args.result.write_text(json.dumps({
        "history": args.history,
        "new_rows_per_round": new_rows,
        "rounds": args.rounds,
        "history_write_s": history_write_s,
        "first_run": first_runs,
        "runs": runs,
        "gold_rows": spark.table(gold_table("streaming")).count(),
        "gold_differences": differences,
    }, indent=1))
    return 1 if differences else 0


def gold_differences(spark) -> list[str]:
    """What differs between each variant's gold table and the streaming one's; empty when none."""
    found = []
    for variant in VARIANTS[1:]:
        missing, extra = rows_only_in_each(spark, gold_table("streaming"), gold_table(variant))
        if missing or extra:
            found.append(f"{gold_table(variant)}: {missing} rows missing, {extra} rows extra "
                         f"compared with {gold_table('streaming')}")
    return found


if __name__ == "__main__":
    raise SystemExit(main())
