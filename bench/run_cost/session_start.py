"""Run-cost part, no-op side B: a bare Spark session's start and one metastore query, in a process of its own.

What the no-op `dbt run` (bench/run_cost/noop_run.py) is held against: the project's session
(dbt_spark_streaming.session.get_or_create_session) on the same lakehouse, then `show tables`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bench.harness.child_process import seconds_since_spawn, spawned_at
from bench.run_cost.plain_start import query_and_write_split
from dbt_spark_streaming import session


def main(argv: list[str] | None = None) -> int:
    main_started = time.time()
    parser = argparse.ArgumentParser(prog="python -m bench.run_cost.session_start")
    parser.add_argument("--result", type=Path, required=True)
    args = parser.parse_args(argv)
    imports_s = main_started - spawned_at()  # parsed first, so that --help works outside a benchmark
    spark = session.get_or_create_session()
    session_s = seconds_since_spawn() - imports_s
    query_and_write_split(spark, args.result, imports_s, session_s)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
