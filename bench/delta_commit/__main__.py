"""What one small Delta append to a table on local disk costs, with the session's settings for
local files (session.py `LOCAL_FILES`: no Hadoop checksum files, Delta's local log store) and
with Hadoop's and Delta's defaults for `file:` paths (the checksummed local file system,
FileContext renames through Delta's HDFS log store).

    .venv/bin/python -m bench.delta_commit [--appends 100] [--pairs 2]

Each side runs in a process of its own (the settings are fixed when the JVM starts), sides
alternating A B A B ..., each on an empty lakehouse (.lakehouse/bench/delta_commit). A process
makes a one-row Delta table, appends one row 20 times to warm up, then times --appends more,
each a write of its own. Then it lists the table's `_delta_log` 50 times through Hadoop's
FileSystem, as Delta does at every snapshot update. Prints, per side, the median and p90 of an
append, the files in `_delta_log` at the end, the median listing, and the process IDs the
machine handed out per append (processes and threads: the processes Hadoop starts, `readlink`
at each FileContext rename and `chmod` at each file created, show there; on a quiet machine
nothing else does), then a summary line `bench delta-commit: ...`.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from statistics import median

from bench.harness.child_process import child_result
from bench.harness.fresh_lakehouse import bench_folder, fresh_session
from bench.harness.machine import code_version, load_average
from bench.harness.run import Run, command_line
from bench.harness.stats import nearest_rank
from dbt_spark_streaming.session import LOCAL_FILES

# What Hadoop and Delta use for `file:` paths when nothing is set, for each of the session's
# settings (a setting added there without its default here fails at once).
_DEFAULT_OF = {
    "spark.hadoop.fs.file.impl": "org.apache.hadoop.fs.LocalFileSystem",
    "spark.hadoop.fs.AbstractFileSystem.file.impl": "org.apache.hadoop.fs.local.LocalFs",
    "spark.delta.logStore.file.impl": "io.delta.storage.HDFSLogStore",
}
DEFAULTS = {key: _DEFAULT_OF[key] for key in LOCAL_FILES}
SIDES = ("defaults", "session")
WARM_UP = 20
LISTINGS = 50


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.delta_commit", description=__doc__.split("\n")[0])
    parser.add_argument("--appends", type=int, default=100, help="timed appends per process")
    parser.add_argument("--pairs", type=int, default=2, help="processes per side, alternating")
    parser.add_argument("--side", choices=SIDES, help="(a child process) measure one side")
    parser.add_argument("--result", help="(a child process) where its JSON result goes")
    return parser.parse_args(argv)


def last_pid() -> int:
    return int(Path("/proc/sys/kernel/ns_last_pid").read_text())


def pids_since(first: int) -> int:
    handed_out = last_pid() - first
    if handed_out < 0:  # the counter wrapped past pid_max
        handed_out += int(Path("/proc/sys/kernel/pid_max").read_text())
    return handed_out


def measure_side(side: str, appends: int) -> dict:
    spark, lakehouse = fresh_session("delta_commit", DEFAULTS if side == "defaults" else None)
    table = f"{lakehouse.warehouse}/appended"
    row = spark.range(1)
    row.write.format("delta").save(table)
    for _ in range(WARM_UP):
        row.write.format("delta").mode("append").save(table)
    seconds = []
    first_pid = last_pid()
    for _ in range(appends):
        started = time.perf_counter()
        row.write.format("delta").mode("append").save(table)
        seconds.append(time.perf_counter() - started)
    pids = pids_since(first_pid)
    log = spark._jvm.org.apache.hadoop.fs.Path(f"{table}/_delta_log")
    fs = log.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    listings = []
    for _ in range(LISTINGS):
        started = time.perf_counter()
        fs.listStatus(log)
        listings.append(time.perf_counter() - started)
    return {
        "side": side,
        "append_ms": [s * 1000 for s in seconds],
        "pids_per_append": pids / appends,
        "log_files": len(list(Path(table.removeprefix("file:"), "_delta_log").iterdir())),
        "listing_ms": median(listings) * 1000,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.side:
        Path(args.result).write_text(json.dumps(measure_side(args.side, args.appends)))
        return 0
    record = Run(command_line("python -m bench.delta_commit", argv)).record
    logs = bench_folder("delta_commit_logs")
    logs.mkdir(parents=True, exist_ok=True)
    runs: dict[str, list[dict]] = {side: [] for side in SIDES}
    for pair in range(1, args.pairs + 1):
        for side in SIDES:
            runs[side].append(child_result(
                ["bench.delta_commit", "--side", side, "--appends", str(args.appends)],
                logs / f"{side}_{pair}.log", logs / f"{side}_{pair}.json"))
            print(f"  {pair}/{args.pairs} {side}: append median "
                  f"{median(runs[side][-1]['append_ms']):.0f} ms", flush=True)
    print(f"\nRun {record['started_at']} (UTC), `{record['command']}`, code {code_version()}; load "
          f"average at start {record['load_start']}, at end {load_average()}. {args.pairs} processes a "
          f"side, {args.appends} timed one-row appends each, all of a side's appends pooled:\n")
    print("| local files | append, median ms | append, p90 ms | process IDs an append | files in `_delta_log` "
          f"after {WARM_UP + args.appends + 1} commits | listing it, median ms |")
    print("|---|---|---|---|---|---|")
    figures = {}
    for side in SIDES:
        appended = [ms for run in runs[side] for ms in run["append_ms"]]
        figures[side] = {
            "append_ms": median(appended), "p90_ms": nearest_rank(appended, 90),
            "pids": median(run["pids_per_append"] for run in runs[side]),
            "log_files": median(run["log_files"] for run in runs[side]),
            "listing_ms": median(run["listing_ms"] for run in runs[side]),
        }
        f = figures[side]
        label = "Hadoop's and Delta's defaults" if side == "defaults" else "the session's (LOCAL_FILES)"
        print(f"| {label} | {f['append_ms']:.0f} | {f['p90_ms']:.0f} | {f['pids']:.1f} | {f['log_files']:.0f} | "
              f"{f['listing_ms']:.2f} |")
    before, after = figures["defaults"], figures["session"]
    print(f"\nbench delta-commit: append_ms={before['append_ms']:.0f}->{after['append_ms']:.0f} "
          f"pids_per_append={before['pids']:.1f}->{after['pids']:.1f} "
          f"log_files={before['log_files']:.0f}->{after['log_files']:.0f} "
          f"listing_ms={before['listing_ms']:.2f}->{after['listing_ms']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
