"""Wall time of the demo's dbt unit tests once the session is up (issue 24: under 60 s together).

Not a test: it prints what it measured on this machine. On a lakehouse of its own
(.lakehouse/bench/unit_tests, emptied at the start) it lands one batch of the demo's data and runs
`dbt build --exclude test_type:unit` once (not measured), so every input of the unit tests is a
table whose column types the fixtures take. Then, in the same process and so in the same Spark
session, it times `dbt test --select test_type:unit` --runs times (3 by default): the demo's three
unit tests (silver_recordings_cleaning and device_counts_per_device in one batch,
recording_windows_drop_duplicates_and_late_rows a three-batch scenario through Spark's streaming
engine). Each run's wall time is dbt's whole command (parse, compile, the tests, run results), as
a user typing it with the session already started would wait; beside it each test's own execute
time from dbt's run results.

    .venv/bin/python -m bench.unit_tests [--runs 3]

Prints a line per run and `bench unit-tests: median_s=<median> runs_s=<a,b,c> target_s=60 met=<yes|no>
session_s=<start> load=<at start>..<at end>`. docs/BENCHMARKS.md section 10 holds the figures
of the run it reports (written by hand: this benchmark does not rewrite the document).
"""

from __future__ import annotations

import argparse
import os
import time
from statistics import median

from bench.harness.dbt_timing import node_seconds
from bench.harness.fresh_lakehouse import bench_folder, use_fresh_bench_lakehouse
from bench.harness.machine import code_version, load_average
from bench.harness.stats import minutes_and_seconds

TARGET_S = 60.0
UNIT_TESTS = ("silver_recordings_cleaning", "device_counts_per_device",
              "recording_windows_drop_duplicates_and_late_rows")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.unit_tests", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="timed `dbt test --select test_type:unit` runs")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs needs at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    load_start = load_average()
    use_fresh_bench_lakehouse("unit_tests")
    # Imported only now, so nothing can build a session before LAKEHOUSE_DIR points at the bench.
    from python_runners.demo.pipeline import land
    from python_runners.ops.dbt_invocation import describe_failure, invoke_dbt, target_args
    from dbt_spark_streaming import session

    # dbt's target and log in the bench's folder: the repository's target/ is left alone.
    paths = target_args(bench_folder("unit_tests") / "target")
    land()
    setup_started = time.perf_counter()
    built = invoke_dbt(["build", "--exclude", "test_type:unit", *paths])
    if not built.success:
        raise SystemExit(f"`dbt build --exclude test_type:unit` failed: {describe_failure(built)}")
    print(f"spark session started in {session.startup_seconds or 0:.1f} s; `dbt build --exclude "
          f"test_type:unit` (the unit tests' inputs) in {time.perf_counter() - setup_started:.1f} s "
          f"(not measured); {os.cpu_count()} cores, load average {load_average()}; code {code_version()}",
          flush=True)

    runs_s = []
    for run in range(1, args.runs + 1):
        load = load_average()
        run_started = time.perf_counter()
        result = invoke_dbt(["test", "--select", "test_type:unit", *paths])
        seconds = time.perf_counter() - run_started
        if not result.success:
            raise SystemExit(f"`dbt test --select test_type:unit` failed: {describe_failure(result)}")
        tests = {r.node.name: (r.status, node_seconds(r)) for r in result.result.results
                 if r.node.resource_type == "unit_test"}  # not the on-run-end hook
        if set(tests) != set(UNIT_TESTS) or any(status != "pass" for status, _ in tests.values()):
            raise SystemExit(f"expected the demo's unit tests {', '.join(UNIT_TESTS)} to pass, got {tests}")
        runs_s.append(seconds)
        print(f"  run {run}: {seconds:.2f} s (" + ", ".join(
            f"{name} {execute:.2f} s" for name, (_, execute) in tests.items()) + f"; load {load})", flush=True)

    middle = median(runs_s)
    print(f"{len(UNIT_TESTS)} unit tests, median of {len(runs_s)} runs {middle:.2f} s; target (issue 24): "
          f"under {TARGET_S:.0f} s: {'met' if middle < TARGET_S else 'NOT met'}; whole benchmark "
          f"{minutes_and_seconds(time.monotonic() - started)}", flush=True)
    print(f"bench unit-tests: median_s={middle:.2f} runs_s={','.join(f'{s:.2f}' for s in runs_s)} "
          f"target_s={TARGET_S:.0f} met={'yes' if middle < TARGET_S else 'no'} "
          f"session_s={session.startup_seconds or 0:.1f} load={load_start}..{load_average()}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
