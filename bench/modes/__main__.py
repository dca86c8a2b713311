"""Per-batch time of output_mode 'update' (MERGE by unique key) vs 'complete' (whole table rewritten).

Not a test: it prints what it measured on this machine. For each batch shape and key count, one
source table gets history appends that hold every key (they build the aggregate's state and the
target's files; not measured), then `--batches` small batches. Shape "random": a per-key total,
each batch touching existing keys drawn at random plus a few new ones. Shape "windows": a count
per device and minute, each batch touching the latest windows only (bench/modes/batch_shapes.py).
After each append every variant's query runs one availableNow catch-up through the project's
StreamingWrite, each with its own target table and checkpoint. Per-batch time is the query
progress's durationMs.triggerExecution; addBatch (the write itself) and the wall time are shown
too. At the end: update_over_complete = complete's median per-batch ms / update's, per shape and
key count (also in the --result JSON, e.g. update_over_complete_1M_windows).
`--deletion-vectors` adds update mode on a table with Delta's deletion vectors enabled.

    .venv/bin/python -m bench.modes [--keys 10000,100000,1000000] [--batches 3]
        [--shapes random,windows] [--changed-keys 1%] [--deletion-vectors] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

from bench.harness.fresh_lakehouse import fresh_session
from bench.harness.machine import load_average
from bench.harness.run import total_line
from bench.harness.stats import count_or_share, minutes_and_seconds
from bench.modes.batch_shapes import SHAPES
from bench.modes.key_totals_model import COMPLETE, UPDATE, UPDATE_WITH_DELETION_VECTORS
from bench.modes.measurement import differences_from_complete, measure_size
from bench.modes.mode_results import ModeResults
from bench.modes.report import summary_lines, table, update_over_complete
from bench.modes.source_batches import NEW_KEY_SHARE, ChangedBatchShape

DEFAULT_KEYS = "10000,100000,1000000"
DEFAULT_CHANGED = "1%"
DEFAULT_SHAPES = ",".join(SHAPES)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.modes", description=__doc__.split("\n")[0])
    parser.add_argument("--keys", default=DEFAULT_KEYS,
                        help=f"comma-separated distinct key counts (default {DEFAULT_KEYS})")
    parser.add_argument("--shapes", default=DEFAULT_SHAPES,
                        help=f"comma-separated batch shapes, of {', '.join(SHAPES)} (default {DEFAULT_SHAPES})")
    parser.add_argument("--batches", type=int, default=3,
                        help="measured batches per key count and mode (default 3)")
    parser.add_argument("--changed-keys", default=DEFAULT_CHANGED,
                        help="rows per measured batch, each a distinct key: a count, or a share of "
                             f"the key count such as 1%% (default {DEFAULT_CHANGED.replace('%', '%%')})")
    parser.add_argument("--deletion-vectors", action="store_true",
                        help="also measure update mode on a table with delta.enableDeletionVectors "
                             "(row update_dv), whose MERGE does not rewrite whole files")
    parser.add_argument("--seed", type=int, default=1, help="seed for the keys each batch touches")
    parser.add_argument("--result", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    args.keys = [int(k) for k in args.keys.split(",") if k.strip()]
    if not args.keys or min(args.keys) < 1 or args.batches < 1:
        parser.error("--keys needs positive counts and --batches at least 1")
    args.shapes = [name.strip() for name in args.shapes.split(",") if name.strip()]
    unknown = [name for name in args.shapes if name not in SHAPES]
    if unknown or not args.shapes:
        parser.error(f"--shapes: {', '.join(unknown) or 'none given'}; known: {', '.join(SHAPES)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    spark, lakehouse = fresh_session("update_vs_complete")
    print_setup(spark, lakehouse, args)

    variants = [UPDATE, COMPLETE] + ([UPDATE_WITH_DELETION_VECTORS] if args.deletion_vectors else [])
    rng = random.Random(args.seed)
    spark.sql("create database if not exists bench")
    results: list[ModeResults] = []
    for shape in (SHAPES[name] for name in args.shapes):
        for keys in args.keys:
            size_started = time.monotonic()
            results += measure_size(spark, lakehouse, shape, keys, variants,
                                    count_or_share(args.changed_keys, keys), args.batches, rng)
            differences = differences_from_complete(spark, shape, keys, variants)
            if differences:
                print(f"FAILED shape={shape.name} keys={keys}: the tables differ after the last "
                      "batch: " + "; ".join(differences), file=sys.stderr)
                return 1
            print(f"shape={shape.name} keys={keys}: done in "
                  f"{minutes_and_seconds(time.monotonic() - size_started)}; after the last batch the "
                  f"{' and '.join(v.name for v in variants)} tables hold the same rows (exceptAll "
                  "both ways)", flush=True)

    print()
    print(table(results))
    for result in results:
        if result.unexpected_batch_counts:
            print(f"note: shape={result.shape} keys={result.keys} {result.mode}: catch-ups with "
                  f"{result.unexpected_batch_counts} micro-batches instead of 1")
    print()
    print("\n".join(summary_lines(results)))
    if args.result:
        args.result.write_text(json.dumps(as_json(results), indent=1))
    print(total_line(started))
    return 0


def as_json(results: list[ModeResults]) -> dict:
    """Every row, and the update_over_complete figures by name (update_over_complete_1M_windows)."""
    figures = {
        name: ratio for mode in sorted({r.mode for r in results if r.mode.startswith("update")})
        for name, ratio in update_over_complete(results, mode).items()
    }
    return {**figures, "rows": [
        {
            "shape": result.shape, "keys": result.keys, "mode": result.mode,
            "batches": len(result.batch_ms), "median_batch_ms": result.median_batch_ms,
            "max_batch_ms": result.max_batch_ms,
            "rows_written_per_batch": result.rows_written_per_batch,
            "rows_in_files_per_batch": result.rows_rewritten_per_batch,
            "rows_read_per_batch": result.rows_read_per_batch,
            "files_touched_per_batch": result.files_touched_per_batch,
            "table_files": result.table_files,
        }
        for result in results
    ]}


def print_setup(spark, lakehouse, args: argparse.Namespace) -> None:
    conf = spark.conf
    print(f"machine: {os.cpu_count()} cores (os.cpu_count()), load average {load_average()}, "
          f"master {conf.get('spark.master')}, "
          f"driver memory {spark.sparkContext.getConf().get('spark.driver.memory', '1g (Spark default)')}")
    print(f"spark {spark.version}, delta {delta_version(spark)}, "
          f"shuffle partitions {conf.get('spark.sql.shuffle.partitions')}, "
          f"state store {conf.get('spark.sql.streaming.stateStore.providerClass').rsplit('.', 1)[-1]}")
    print(f"lakehouse: {lakehouse.root} (wiped at start)")
    examples = ", ".join(
        f"{keys} keys -> {ChangedBatchShape(count_or_share(args.changed_keys, keys)).rows} rows"
        for keys in args.keys
    )
    print(f"each shape and size: history batches holding every key (build state; not measured), "
          f"then {args.batches} measured batches per mode")
    print(f"rows per measured batch (--changed-keys {args.changed_keys}): {examples}; each row a "
          f"distinct key, {NEW_KEY_SHARE:.0%} of them (at least 1) new keys (seed {args.seed})")
    for name in args.shapes:
        print(f"shape {name}: {SHAPES[name].touched}")
    print("per-batch ms = progress durationMs.triggerExecution; addBatch = the write; wall = "
          "start_streaming_write until the availableNow query stopped")
    print("state build ms = the unmeasured history batches' triggerExecution")
    print("rows read = rows the batch's Spark jobs read from data files: the new source rows, and "
          "the target files a MERGE scanned (Spark's status store)")
    print("files touched = data files a batch's commits rewrote or gave a deletion vector; files in "
          "table = after the last batch")
    print("rows written = rows the batch's Delta commits inserted or updated; rows in files = "
          "rows in the data files they wrote (a MERGE copies a file's unchanged rows along)")
    print(flush=True)


def delta_version(spark) -> str:
    try:
        return str(spark._jvm.io.delta.package.VERSION())
    except Exception:  # the JVM-side constant moved; the Python package is pinned to the same release
        from importlib.metadata import version
        return f"{version('delta-spark')} (python package)"


if __name__ == "__main__":
    sys.exit(main())
