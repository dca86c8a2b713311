"""Side A of the overhead benchmark: the demo's recordings path through `dbt build`, one process.

Starts the Spark session first (as dbt-spark's session method would on its first connection), so
the JVM's start is timed apart; then `dbt build` of the seed and the five streaming models
(no data tests: the hand-written side has none). Prints nothing of its own; writes its timings
and each model's rows and batch time from the progress table to --result.
"""

from __future__ import annotations

import time

PROCESS_STARTED = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

from python_runners.ops.dbt_invocation import run_dbt, target_args  # noqa: E402
from dbt_spark_streaming.session import get_or_create_session  # noqa: E402

from bench.harness.dbt_timing import execute_seconds  # noqa: E402
from bench.overhead.selection import SEED, STREAMING_MODELS, gold_rows  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.overhead.dbt_pipeline_run")
    parser.add_argument("--target-path", required=True)
    parser.add_argument("--result", type=Path, required=True)
    args = parser.parse_args(argv)
    imported = time.perf_counter()

    spark = get_or_create_session()
    session_ready = time.perf_counter()
    result = run_dbt([
        "build", "--select", SEED, *STREAMING_MODELS, "--resource-type", "seed", "--resource-type", "model",
        *target_args(args.target_path),
    ])
    finished = time.perf_counter()
    execute_s = execute_seconds(result)
    built = {SEED, *STREAMING_MODELS}
    if not built <= set(execute_s):
        raise SystemExit(f"dbt build ran {sorted(execute_s)}, expected {SEED} and {STREAMING_MODELS}")
    args.result.write_text(json.dumps({
        "imports_s": imported - PROCESS_STARTED,
        "jvm_start_s": session_ready - imported,
        "dbt_s": finished - session_ready,
        "processing_s": sum(seconds for name, seconds in execute_s.items() if name in built),
        "execute_s": execute_s,
        "streams": streams_from_progress_table(spark),
        "gold_rows": gold_rows(spark),
    }, indent=1))
    return 0


def streams_from_progress_table(spark) -> dict:
    """Per model: rows read, batches and their summed duration, as the progress table recorded them."""
    from dbt_spark_streaming.progress.table import table_name

    rows = spark.sql(f"""
        select model, sum(num_input_rows) as rows, count(*) as batches,
               sum(batch_duration_ms) as batch_ms
        from {table_name()} group by model
    """).collect()
    return {row["model"].split(".")[-1]: {"rows": int(row["rows"]), "batches": int(row["batches"]),
                                          "batch_ms": int(row["batch_ms"])} for row in rows}


if __name__ == "__main__":
    raise SystemExit(main())
