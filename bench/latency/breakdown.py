"""Part 3's breakdown: each query's micro-batches as Spark reported them, from the progress table.

Run by bench/latency/measure.py after the service stopped, in a process of its own (the service's
lakehouse, whose embedded metastore one process at a time may open; the table is read by path):

    python -m bench.latency.breakdown --lakehouse <root> --result <file.json>

The result maps each query name to its batches: batch id, start time (epoch seconds), input
rows and durationMs (latestOffset, getBatch, queryPlanning, addBatch, walCommit, commitOffsets,
triggerExecution).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from dbt_spark_streaming.lakehouse import ROOT_VARIABLE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.latency.breakdown")
    parser.add_argument("--lakehouse", required=True)
    parser.add_argument("--result", type=Path, required=True)
    args = parser.parse_args(argv)
    os.environ[ROOT_VARIABLE] = args.lakehouse
    from dbt_spark_streaming.lakehouse import Lakehouse
    from dbt_spark_streaming.progress.batch import BatchProgress
    from dbt_spark_streaming.progress.table import table_location
    from dbt_spark_streaming.session import get_or_create_session

    lakehouse = Lakehouse.from_env()
    spark = get_or_create_session(lakehouse)
    rows = spark.read.format("delta").load(table_location(lakehouse)).select("progress_json").collect()
    batches: dict[str, list[dict]] = {}
    for row in rows:
        batch = BatchProgress.from_progress(row.progress_json)
        if batch.timestamp is None:
            print(f"breakdown: a progress row without a start time, left out: {row.progress_json[:300]}")
            continue
        batches.setdefault(batch.query_name, []).append({
            "batch_id": batch.batch_id,
            "started_at": batch.timestamp.timestamp(),
            "input_rows": batch.input_rows,
            "duration_ms": dict(batch.durations_ms),
        })
    for found in batches.values():
        found.sort(key=lambda batch: batch["batch_id"])
    args.result.write_text(json.dumps(batches))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
