"""Per-batch time of a cdc_table's apply (SCD1 and SCD2, by MERGE) at 100k and 1M keys, 1% changed.

Not a test: it prints what it measured on this machine. For each key count, one Delta table of
change rows is the source of two streaming queries, the project's own StreamingWrite of a
cdc_table (keys=['key'], sequence_by='lsn', apply_as_deletes="op = 'D'", except_columns=['op']),
one stored_as='scd1', one 'scd2', each with its table and checkpoint. The tables and their
tombstones are created by the runtime's create_tables_if_missing (FeedShape.table_schema(), with
the table properties a cdc_table gets, change data feed on) and, after one tiny batch that gives
each checkpoint its progress, loaded in bulk with one current row per key (not through the CDC
path; not measured; bench/cdc/measure.py). Then each round appends one batch of changes to 1% of the keys
(bench/cdc/feed.py: updates, some twice, deletes, new keys, late changes, repeats) and runs each
query once with the availableNow trigger, through the real foreachBatch function
(writes/cdc/apply_changes.py's applying_changes), one micro-batch per round. The first round is a
warm-up, not counted.

Per-batch time is the query progress's durationMs.triggerExecution (the micro-batch from start to
its commit, foreachBatch included); the phases (bench/cdc/phases.py) are timed inside the same
foreachBatch calls. After the last round the tables are checked against what the feed says they
hold (row counts, current rows, sum of current lsn).

    .venv/bin/python -m bench.cdc [--keys 100000,1000000] [--batches 4] [--changed-keys 1%]
        [--seed 1] [--result FILE] [--doc docs/BENCHMARKS.md | --no-doc]

Prints `bench cdc: scd1_s_100k=<median s> scd2_s_100k=... scd1_s_1M=... scd2_s_1M=...` and
rewrites its section of docs/BENCHMARKS.md (the others keep the run that wrote them).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

from bench.cdc.doc import cdc_section
from bench.cdc.feed import ChangeFeed
from bench.cdc.measure import SCHEMA, check_tables, measure_size
from bench.cdc.phases import PhaseClock
from bench.harness.doc import add_doc_arguments, publish_section
from bench.harness.fresh_lakehouse import fresh_session
from bench.harness.machine import code_version, spark_line, versions_tag
from bench.harness.run import Run, command_line
from bench.harness.stats import count_or_share, minutes_and_seconds, size_label


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.cdc", description=__doc__.split("\n")[0])
    parser.add_argument("--keys", default="100000,1000000", help="comma-separated key counts (default 100k,1M)")
    parser.add_argument("--batches", type=int, default=4, help="measured batches per key count, after one warm-up")
    parser.add_argument("--changed-keys", default="1%",
                        help="distinct keys each batch changes: a count, or a share of the keys such as 1%%")
    parser.add_argument("--files", type=int, default=int(os.environ.get("SPARK_SHUFFLE_PARTITIONS", "4")),
                        help="data files the bulk load writes (default: the shuffle partitions, as a MERGE "
                             "writes them)")
    parser.add_argument("--seed", type=int, default=1)
    add_doc_arguments(parser)
    args = parser.parse_args(argv)
    args.keys = [int(k) for k in args.keys.split(",") if k.strip()]
    if not args.keys or min(args.keys) < 100 or args.batches < 1:
        parser.error("--keys needs counts of at least 100 and --batches at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run = Run(command_line("python -m bench.cdc", argv), code=code_version())
    spark, lakehouse = fresh_session("cdc_apply")
    spark.sql(f"create database if not exists {SCHEMA}")
    rng = random.Random(args.seed)
    print(spark_line(spark, lakehouse), flush=True)

    rows, checks = [], []
    with PhaseClock().installed() as clock:
        for keys in args.keys:
            size_started = time.monotonic()
            feed = ChangeFeed(keys, count_or_share(args.changed_keys, keys), rng)
            print(f"keys={keys}: each batch changes {feed.changed_keys} keys ({feed.counts()}), "
                  f"{feed.rows_per_batch()} rows", flush=True)
            measured = measure_size(spark, lakehouse, feed, args.batches, args.files, clock)
            problems = check_tables(spark, feed, keys)
            checks.append({"keys": keys, "problems": problems})
            if problems:
                print(f"FAILED keys={keys}: " + "; ".join(problems), file=sys.stderr)
                return 1
            rows += [{**m.as_json(feed.rows_per_batch()), "feed": feed.counts()} for m in measured]
            print(f"keys={keys}: done in {minutes_and_seconds(time.monotonic() - size_started)}; both "
                  "tables hold what the feed says (rows, current rows, sum of current lsn)", flush=True)

    result = {**run.end(), "measured_batches": args.batches, "files": args.files,
              "changed_keys": args.changed_keys, "rows": rows, "checks": checks}
    result["summary"] = summary_line(result)
    publish_section(result, cdc_section(result), args, "cdc")
    print(run.total_line())
    return 0


def summary_line(result: dict) -> str:
    return "bench cdc: " + " ".join(
        f"{row['stored_as']}_s_{size_label(row['keys'])}={row['median_s']:.2f}" for row in result["rows"]
    ) + " " + versions_tag()


if __name__ == "__main__":
    sys.exit(main())
