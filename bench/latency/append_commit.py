"""What one small streaming append costs in Delta, by how the commit records its batch.

    python -m bench.latency.append_commit [--commits 30]

Appends 10 rows at a time to a fresh Delta table, as a micro-batch would, three ways: with
Delta's transaction id (txnAppId/txnVersion, what Delta's streaming sink does), with the batch
mark in userMetadata (python_runners/idempotent_batches.appending_once), and an overwrite (what a
complete-mode batch does). Prints the median and p90 per commit, the first 5 left out as warm-up.
Delta checks a transaction id against the table's whole state, rebuilt after every commit; the
mark costs nothing to write and is read once per query start.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

from pyspark.sql import DataFrame, SparkSession

from bench.harness.fresh_lakehouse import bench_folder, fresh_session
from dbt_spark_streaming.writes.batch_marks import batch_mark

WARM_UP = 5
Write = Callable[[DataFrame, int, str], None]


def with_transaction_id(batch: DataFrame, batch_id: int, location: str) -> None:
    (batch.write.format("delta").mode("append")
     .option("txnAppId", "bench").option("txnVersion", batch_id).save(location))


def with_batch_mark(batch: DataFrame, batch_id: int, location: str) -> None:
    (batch.write.format("delta").mode("append")
     .option("userMetadata", batch_mark("bench", batch_id)).save(location))


def overwrite(batch: DataFrame, batch_id: int, location: str) -> None:
    batch.write.format("delta").mode("overwrite").save(location)


WAYS: dict[str, Write] = {
    "append, Delta transaction id": with_transaction_id,
    "append, batch mark": with_batch_mark,
    "overwrite (complete mode)": overwrite,
}


def commit_seconds(spark: SparkSession, write: Write, location: str, commits: int) -> list[float]:
    spark.range(10).selectExpr("id", "cast(id as string) as name").write.format("delta").save(location)
    seconds = []
    for batch_id in range(commits):
        batch = spark.range(10).selectExpr(f"id + {batch_id * 10} as id", "cast(id as string) as name")
        started = time.monotonic()
        write(batch, batch_id, location)
        seconds.append(time.monotonic() - started)
    return seconds[WARM_UP:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.latency.append_commit", description=__doc__.split("\n")[0])
    parser.add_argument("--commits", type=int, default=30)
    args = parser.parse_args(argv)
    spark, _ = fresh_session("append_commit")
    folder = bench_folder("append_commit")
    for index, (way, write) in enumerate(WAYS.items()):
        seconds = sorted(commit_seconds(spark, write, str(folder / f"table_{index}"), args.commits))
        print(f"bench append_commit: {way}: median {statistics.median(seconds) * 1000:.0f} ms, "
              f"p90 {seconds[int(len(seconds) * 0.9)] * 1000:.0f} ms per commit", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
