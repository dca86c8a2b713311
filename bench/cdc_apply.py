"""Per-batch time of a cdc_table's apply (SCD1 and SCD2, by MERGE) at 100k and 1M keys, 1% changed.

Not a test: it prints what it measured on this machine. For each key count, one Delta table of
change rows is the source of two streaming queries, the project's own StreamingWrite of a
cdc_table (keys=['key'], sequence_by='lsn', apply_as_deletes="op = 'D'", except_columns=['op']),
one stored_as='scd1', one 'scd2', each with its table and checkpoint. The tables and their
tombstones are created by the runtime's create_tables_if_missing (FeedShape.table_schema(), with
the table properties a cdc_table gets, change data feed on) and, after one tiny batch that gives
each checkpoint its progress, loaded in bulk with one current row per key (not through the CDC
path; not measured). Then each round appends one batch of changes to 1% of the keys
(bench/cdc_feed.py: updates, some twice, deletes, new keys, late changes, repeats) and runs each
query once with the availableNow trigger, through the real foreachBatch function
(writes/apply_changes.py's applying_changes), one micro-batch per round. The first round is a
warm-up, not counted.

Per-batch time is the query progress's durationMs.triggerExecution (the micro-batch from start to
its commit, foreachBatch included); the phases (bench/cdc_phases.py) are timed inside the same
foreachBatch calls. After the last round the tables are checked against what the feed says they
hold (row counts, current rows, sum of current lsn).

    .venv/bin/python -m bench.cdc_apply [--keys 100000,1000000] [--batches 4] [--changed-keys 1%]
        [--seed 1] [--result FILE] [--doc docs/BENCHMARKS.md | --no-doc]

Prints `bench cdc: scd1_s_100k=<median s> scd2_s_100k=... scd1_s_1M=... scd2_s_1M=...` and
rewrites its section of docs/BENCHMARKS.md (the others keep the run that wrote them).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from statistics import median

from bench.benchmarks_doc import cdc_section, replace_section
from bench.catch_up_timing import CatchUp, timed_catch_up
from bench.cdc_feed import CONFIG, FEED_COLUMNS, FEED_SCHEMA, ChangeFeed, append_changes, bootstrap_rows, loaded_rows
from bench.cdc_phases import PHASES, PhaseClock
from bench.fresh_lakehouse import use_fresh_bench_lakehouse
from bench.machine import load_average
from bench.report import key_label, minutes_and_seconds
from python_runners.runtime.lakehouse import REPO_ROOT, Lakehouse

SCHEMA = "bench"
STORED_AS = ("scd1", "scd2")
MERGE_METRICS = ("executionTimeMs", "scanTimeMs", "rewriteTimeMs", "numTargetFilesRemoved",
                 "numTargetFilesAdded", "numTargetRowsCopied", "numSourceRows")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.cdc_apply", description=__doc__.split("\n")[0])
    parser.add_argument("--keys", default="100000,1000000", help="comma-separated key counts (default 100k,1M)")
    parser.add_argument("--batches", type=int, default=4, help="measured batches per key count, after one warm-up")
    parser.add_argument("--changed-keys", default="1%",
                        help="distinct keys each batch changes: a count, or a share of the keys such as 1%%")
    parser.add_argument("--files", type=int, default=int(os.environ.get("SPARK_SHUFFLE_PARTITIONS", "4")),
                        help="data files the bulk load writes (default: the shuffle partitions, as a MERGE "
                             "writes them)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--result", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--doc", type=Path, default=REPO_ROOT / "docs" / "BENCHMARKS.md")
    parser.add_argument("--no-doc", action="store_true", help="leave docs/BENCHMARKS.md alone")
    args = parser.parse_args(argv)
    args.keys = [int(k) for k in args.keys.split(",") if k.strip()]
    if not args.keys or min(args.keys) < 100 or args.batches < 1:
        parser.error("--keys needs counts of at least 100 and --batches at least 1")
    return args


def changed_keys(spec: str, keys: int) -> int:
    if spec.endswith("%"):
        return max(1, round(keys * float(spec[:-1]) / 100))
    return int(spec)


@dataclass
class Measured:
    keys: int
    stored_as: str
    load_s: float = 0.0
    catch_ups: list[CatchUp] = field(default_factory=list)
    phases: list[dict[str, float]] = field(default_factory=list)  # one per measured batch
    merges: list[dict[str, int]] = field(default_factory=list)  # the table's MERGE commit metrics
    tombstone_merges: list[dict[str, int]] = field(default_factory=list)  # the tombstones' MERGEs
    tombstone_commits: list[str] = field(default_factory=list)  # the operation of each of their commits
    warmup_s: float = 0.0

    def as_json(self, rows_per_batch: int) -> dict:
        batch_s = [ms / 1000 for run in self.catch_ups for ms in run.trigger_execution_ms]
        add_batch_s = [ms / 1000 for run in self.catch_ups for ms in run.add_batch_ms]
        per_batch = lambda values: median(values) if values else None  # noqa: E731
        return {
            "keys": self.keys, "stored_as": self.stored_as, "batches": len(batch_s),
            "batch_s": batch_s, "median_s": median(batch_s), "max_s": max(batch_s),
            "add_batch_median_s": median(add_batch_s),
            "wall_median_s": median(run.wall_ms / 1000 for run in self.catch_ups),
            "rows_per_batch": rows_per_batch,
            "rows_written_per_batch": median(run.rows_written for run in self.catch_ups),
            "rows_in_files_per_batch": median(run.rows_rewritten for run in self.catch_ups),
            "files_touched_per_batch": median(run.files_touched for run in self.catch_ups),
            "table_files": self.catch_ups[-1].table_files,
            "rows_read_per_batch": per_batch([run.rows_read for run in self.catch_ups if run.rows_read is not None]),
            "unexpected_batch_counts": [run.batches for run in self.catch_ups if run.batches != 1],
            "phases_median_s": {name: median(p[name] for p in self.phases)
                                for name in self.phases[0]} if self.phases else {},
            "spark_median_s": median(
                run.trigger_execution_ms[0] / 1000 - p["foreach_batch"]
                for run, p in zip(self.catch_ups, self.phases) if run.trigger_execution_ms
            ) if self.phases else None,
            "merge_median": _medians(self.merges),
            "tombstones_merge_median": _medians(self.tombstone_merges),
            "tombstones_commits": {operation: self.tombstone_commits.count(operation)
                                   for operation in sorted(set(self.tombstone_commits))},
            "load_s": self.load_s, "warmup_s": self.warmup_s,
        }


def _medians(merges: list[dict[str, int]]) -> dict[str, float]:
    return {name: median(m.get(name, 0) for m in merges) for name in MERGE_METRICS} if merges else {}


def commits_since(spark, table: str, version: int) -> tuple[list[str], list[dict[str, int]]]:
    """The operations of the commits after `version`, and the MERGE commits' metrics."""
    from python_runners.runtime.delta import tables as delta_tables
    commits = delta_tables.commits_since(spark, table, version)
    return [operation for operation, _ in commits], [
        {name: int(metrics.get(name, 0)) for name in MERGE_METRICS}
        for operation, metrics in commits if operation == "MERGE"]


def code_version() -> str:
    """The commit measured, and the runtime's files that differed from it when the run started."""
    def git(*arguments: str) -> str:
        try:
            return subprocess.run(["git", *arguments], cwd=REPO_ROOT, capture_output=True, text=True,
                                  timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    changed = [line.split(maxsplit=1)[-1]
               for line in git("status", "--porcelain", "--", "python_runners/runtime").splitlines()]
    return commit + (f" with uncommitted changes to {', '.join(changed)}" if changed else "")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    run = {"started_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M"),
           "command": "python -m bench.cdc_apply " + shlex.join(argv if argv is not None else sys.argv[1:]),
           "load_start": load_average(), "code": code_version()}
    use_fresh_bench_lakehouse("cdc_apply")
    # Imported only now, so nothing can build a session before LAKEHOUSE_DIR points at the bench.
    from python_runners.runtime.session import get_or_create_session

    lakehouse = Lakehouse.from_env()
    spark = get_or_create_session(lakehouse)
    spark.sql(f"create database if not exists {SCHEMA}")
    rng = random.Random(args.seed)
    print(f"spark {spark.version}, shuffle partitions {spark.conf.get('spark.sql.shuffle.partitions')}, "
          f"{os.cpu_count()} cores, load average {load_average()}; lakehouse {lakehouse.root} (wiped at start)",
          flush=True)

    rows, checks = [], []
    with PhaseClock().installed() as clock:
        for keys in args.keys:
            size_started = time.monotonic()
            feed = ChangeFeed(keys, changed_keys(args.changed_keys, keys), rng)
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

    run["duration_min"] = (time.monotonic() - started) / 60
    run["load_end"] = load_average()
    result = {**run, "measured_batches": args.batches, "files": args.files, "changed_keys": args.changed_keys,
              "rows": rows, "checks": checks}
    result["summary"] = summary_line(result)
    if args.result:
        args.result.write_text(json.dumps(result, indent=1))
    section = cdc_section(result)
    print()
    print("\n".join(section[:-4]))  # the summary line last
    print(result["summary"])
    if not args.no_doc:
        text = args.doc.read_text() if args.doc.exists() else "# Benchmarks\n"
        args.doc.write_text(replace_section(text, section))
        print(f"bench cdc: wrote its section of {args.doc}")
    print(f"total wall time {minutes_and_seconds(time.monotonic() - started)}, load average at the end "
          f"{load_average()}")
    return 0


def summary_line(result: dict) -> str:
    return "bench cdc: " + " ".join(
        f"{row['stored_as']}_s_{key_label(row['keys'])}={row['median_s']:.2f}" for row in result["rows"]
    )


def measure_size(spark, lakehouse: Lakehouse, feed: ChangeFeed, batches: int, files: int,
                 clock: PhaseClock) -> list[Measured]:
    from python_runners.runtime.config.cdc import CHANGE_DATA_FEED, ApplyChanges
    from python_runners.runtime.config.triggers import AVAILABLE_NOW
    from python_runners.runtime.writes.apply_changes import create_tables_if_missing
    from python_runners.runtime.writes.change_rows import FeedShape
    from python_runners.runtime.writes.streaming import StreamingWrite

    keys = feed.keys
    source, stream_view, model_view = f"{SCHEMA}.cdc_changes_{keys}", f"cdc_stream_{keys}", f"cdc_feed_{keys}"
    spark.sql(f"create table {source} ({FEED_SCHEMA}) using delta")
    append_changes(spark, source, bootstrap_rows())
    spark.readStream.table(source).createOrReplaceTempView(stream_view)
    spark.sql(f"select {', '.join(FEED_COLUMNS)} from {stream_view}").createOrReplaceTempView(model_view)

    writes, results = {}, {}
    for stored_as in STORED_AS:
        name = f"{stored_as}_{keys}"
        changes = ApplyChanges.from_config(name, {**CONFIG, "stored_as": stored_as})
        write = StreamingWrite(
            model=name, source_view=model_view, target_table=f"{SCHEMA}.{name}", output_mode="append",
            trigger=AVAILABLE_NOW, checkpoint=lakehouse.checkpoint_path(f"{SCHEMA}/{name}"),
            # What ModelConfig.documented() gives a cdc_table: a MERGE-kept table has its change feed on.
            documented={"streaming.output_mode": f"apply changes ({stored_as})", **changes.documented(),
                        CHANGE_DATA_FEED: "true"},
            changes=changes,
        )
        shape = FeedShape(changes, spark.table(model_view).schema)
        create_tables_if_missing(spark, shape, write.target_table, (), write.documented, exists=False)
        timed_catch_up(spark, write)  # the bootstrap delete: the checkpoint's first batch
        clock.take()
        load_started = time.perf_counter()
        loaded_rows(spark, keys, shape.table_schema(), files, stored_as == "scd2").write.format("delta") \
            .mode("append").saveAsTable(write.target_table)
        writes[stored_as] = write
        results[stored_as] = Measured(keys, stored_as, load_s=time.perf_counter() - load_started)
        print(f"  {stored_as}: {keys} rows loaded in bulk in {results[stored_as].load_s:.1f} s", flush=True)

    from python_runners.runtime.delta import tables as delta_tables
    for round_ in range(1 + batches):
        append_changes(spark, source, feed.next_batch())
        # Alternate the order, so neither always runs right after the other (GC, caches).
        for stored_as in STORED_AS if round_ % 2 == 0 else reversed(STORED_AS):
            write, result = writes[stored_as], results[stored_as]
            tombstones = write.changes.tombstones_table(write.target_table)
            before = delta_tables.current_version(spark, write.target_table)
            tombstones_before = delta_tables.current_version(spark, tombstones)
            catch_up = timed_catch_up(spark, write)
            phases = clock.take()
            seconds = sum(catch_up.trigger_execution_ms) / 1000
            label = "warm-up" if round_ == 0 else f"batch {round_}"
            print(f"  {stored_as} {label}: {seconds:.2f} s (" + ", ".join(
                f"{name} {sum(p[name] for p in phases):.2f} s/{sum(p.get(f'{name}_jobs', 0) for p in phases):.0f} jobs"
                for name in PHASES) + ")", flush=True)
            if round_ == 0:
                result.warmup_s = seconds
                continue
            result.catch_ups.append(catch_up)
            result.phases += phases
            result.merges += commits_since(spark, write.target_table, before)[1]
            operations, merges = commits_since(spark, tombstones, tombstones_before)
            result.tombstone_commits += operations
            result.tombstone_merges += merges
    return [results[stored_as] for stored_as in STORED_AS]


def check_tables(spark, feed: ChangeFeed, keys: int) -> list[str]:
    """What differs between the tables and what the feed says they hold; empty when nothing."""
    from pyspark.sql import functions as F

    problems = []
    scd1 = spark.table(f"{SCHEMA}.scd1_{keys}").agg(F.count("*"), F.sum("lsn")).first()
    if tuple(scd1) != (feed.live_keys, feed.live_lsn_sum):
        problems.append(f"scd1 holds {scd1[0]} rows, sum(lsn) {scd1[1]}; expected {feed.live_keys}, "
                        f"{feed.live_lsn_sum}")
    scd2 = spark.table(f"{SCHEMA}.scd2_{keys}").agg(
        F.count("*"), F.count(F.when(F.col("__end_at").isNull(), 1)),
        F.sum(F.when(F.col("__end_at").isNull(), F.col("lsn"))),
        F.count(F.when(F.col("__end_at") <= F.col("__start_at"), 1)),
    ).first()
    expected = (feed.scd2_rows, feed.live_keys, feed.live_lsn_sum, 0)
    if tuple(scd2) != expected:
        problems.append(f"scd2 holds (rows, current rows, sum of current lsn, versions ending before they "
                        f"start) {tuple(scd2)}; expected {expected}")
    return problems


if __name__ == "__main__":
    sys.exit(main())
