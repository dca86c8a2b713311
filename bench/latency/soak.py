"""`make bench-soak`: the always-on service for an hour (or days); does it slow down or grow?

    python -m bench.latency.soak [--minutes 60] [--window-minutes 10]

The latency benchmark's set-up (bench/latency/measure.py) with every model of the demo serving
(on_new_data) and one small file landing every 0.5 s for --minutes, each moved to an archive
folder once bronze has read it (SERVICE_ARGS); latency is that of each
file to gold.device_counts over the three hops. "first" and "last" are the files landed in the
first and the last --window-minutes (they overlap when the run is shorter than two windows):

- p50_first_ms, p50_last_ms, last_over_first (their ratio), p95_last_ms: latency percentiles
  (nearest rank).
- files_max: the most live data files of any Delta table under the soak lakehouse's warehouse
  at the end (its latest checkpoint's `add` entries and the commits after it, replayed).
- tombstones_max: the most `remove` entries (removed files, kept in the log until the table's
  deletedFileRetentionDuration passes) in any table's latest checkpoint, which every reader of
  the table loads; 0 for a table without a checkpoint yet.
- rss_first_mb, rss_last_mb: the service's resident memory (VmRSS of its Python process and of
  every process under it, the JVM included) at the end of the first window and at the end,
  once the last file is in gold and before the service stops (bench/latency/memory.py).

The checkpoints are read as files (python_runners/testing/delta_log.py): this process starts no
Spark. Each table's figures come on lines before the summary, the last line:

    bench soak: minutes=<m> landings=<n> p50_first_ms=<x> p50_last_ms=<y> last_over_first=<r>
    p95_last_ms=<z> files_max=<f> tombstones_max=<t> rss_first_mb=<a> rss_last_mb=<b>

(one line). The targets (TARGETS) are said on the line before it; before them, what each
streaming checkpoint holds (bench/latency/checkpoint_sizes.py: Spark's own retention, checked). Its logs and soak.json are
under .lakehouse/bench/soak_logs. Not part of `make test`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from bench.harness.fresh_lakehouse import empty_folder
from bench.harness.stats import nearest_rank
from bench.latency import checkpoint_sizes
from bench.latency.measure import measure_latency
from bench.latency.memory import Resident, megabytes, tree_resident
from python_runners.testing import delta_log
from python_runners.testing.service_process import ServiceProcess

# What a service that runs for days sets: the demo's landing folder is cleaned up as its files
# are read (the recordings source's archive_to), so that each batch's listing stays small.
SERVICE_ARGS = ("--vars", json.dumps({"recordings_archive_to": "archive/recordings"}))
TARGETS = {"last_over_first": 1.1, "p95_last_over_p50_last": 2.0, "files_max": 100,
           "tombstones_max": 1000, "rss_last_over_first": 1.1}


class MemorySamples:
    """The service's process tree's resident memory after the `at`-th landing and at the end."""

    def __init__(self, at: int):
        self.at = at
        self.first: list[Resident] = []
        self.last: list[Resident] = []

    def after_landing(self, service: ServiceProcess, count: int) -> None:
        if count == self.at:
            self.first = tree_resident(service.process.pid)

    def before_stop(self, service: ServiceProcess) -> None:
        self.last = tree_resident(service.process.pid)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.latency.soak", description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--window-minutes", type=float, default=10,
                        help="the first and the last this many minutes are compared")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between landings")
    parser.add_argument("--trigger", default="on_new_data")
    args = parser.parse_args(argv)
    landings = int(args.minutes * 60 / args.interval)
    window = max(1, min(landings, int(args.window_minutes * 60 / args.interval)))
    logs = empty_folder("soak_logs")
    memory = MemorySamples(at=window)
    started = time.monotonic()
    print(f"bench soak: {landings} landings over {args.minutes:g} min, all demo models serving, "
          f"windows of {window} landings; logs in {logs}", flush=True)
    result = measure_latency(args.trigger, landings, args.interval, logs, all_models=True,
                             after_landing=memory.after_landing, before_stop=memory.before_stop,
                             service_args=SERVICE_ARGS)
    latencies = result["latencies_ms"]
    first, last = latencies[:window], latencies[-window:]
    tables = {name: table_figures(path) for name, path in delta_tables(Path(result["warehouse"]))}
    summary = {
        "minutes": args.minutes, "landings": landings,
        "p50_first_ms": nearest_rank(first, 50), "p50_last_ms": nearest_rank(last, 50),
        "p95_last_ms": nearest_rank(last, 95),
        "files_max": max((t["live_data_files"] for t in tables.values()), default=0),
        "tombstones_max": max((t["tombstones"] for t in tables.values()), default=0),
        "rss_first_mb": megabytes(memory.first), "rss_last_mb": megabytes(memory.last),
    }
    summary["last_over_first"] = summary["p50_last_ms"] / summary["p50_first_ms"]
    (logs / "soak.json").write_text(json.dumps({
        **result, "window": window, "tables": tables, "summary": summary,
        "rss_first": [vars(process) for process in memory.first],
        "rss_last": [vars(process) for process in memory.last]}))
    for name, figures in tables.items():
        checkpoint = figures["checkpoint_version"]
        print(f"bench soak: {name}: version {figures['version']}, {figures['live_data_files']} live data "
              f"files, {figures['tombstones']} tombstones "
              + (f"in checkpoint {checkpoint}" if checkpoint >= 0 else "(no checkpoint yet)")
              + f", {figures['log_files']} files in _delta_log")
    for checkpoint in checkpoint_sizes.checkpoints(Path(result["warehouse"]).parent / "checkpoints"):
        figures = checkpoint_sizes.sizes(checkpoint)
        print(f"bench soak: checkpoint {checkpoint.parent.name}/{checkpoint.name}: "
              + ", ".join(f"{key} {value}" for key, value in figures.items()))
    for when, found in (("first", memory.first), ("last", memory.last)):
        print(f"bench soak: rss {when}: " + ", ".join(
            f"{process.name} {process.pid} {process.kib / 1024:.0f} MB" for process in found))
    print(f"bench soak: done in {(time.monotonic() - started) / 60:.1f} min; targets: "
          + "; ".join(f"{name} {value:.4g} (<= {target:g}: {'met' if value <= target else 'NOT met'})"
                      for name, target, value in target_checks(summary)))
    print(summary_line(summary), flush=True)
    return 0


def summary_line(summary: dict) -> str:
    return (f"bench soak: minutes={summary['minutes']:g} landings={summary['landings']} "
            f"p50_first_ms={summary['p50_first_ms']:.0f} p50_last_ms={summary['p50_last_ms']:.0f} "
            f"last_over_first={summary['last_over_first']:.2f} p95_last_ms={summary['p95_last_ms']:.0f} "
            f"files_max={summary['files_max']} tombstones_max={summary['tombstones_max']} "
            f"rss_first_mb={summary['rss_first_mb']:.0f} rss_last_mb={summary['rss_last_mb']:.0f}")


def target_checks(summary: dict) -> list[tuple[str, float, float]]:
    rss_first = summary["rss_first_mb"] or float("nan")
    values = {"last_over_first": summary["last_over_first"],
              "p95_last_over_p50_last": summary["p95_last_ms"] / summary["p50_last_ms"],
              "files_max": summary["files_max"], "tombstones_max": summary["tombstones_max"],
              "rss_last_over_first": summary["rss_last_mb"] / rss_first}
    return [(name, target, values[name]) for name, target in TARGETS.items()]


def delta_tables(warehouse: Path) -> list[tuple[str, Path]]:
    """Every Delta table under the warehouse (schema.db/table, or deeper), as schema.table."""
    found = []
    for folder, subfolders, _files in os.walk(warehouse):
        if delta_log.LOG_FOLDER in subfolders:
            path = Path(folder)
            found.append((".".join(part.removesuffix(".db") for part in path.relative_to(warehouse).parts),
                          path))
            subfolders.clear()  # a table's own folders hold no other table
    return sorted(found)


def table_figures(table: Path) -> dict[str, int]:
    checkpoint = delta_log.latest_checkpoint(table)
    return {"live_data_files": len(delta_log.live_data_files(table)),
            "tombstones": delta_log.tombstones(table),
            "checkpoint_version": -1 if checkpoint is None else checkpoint.version,
            "version": delta_log.latest_version(table),
            "log_files": len(os.listdir(delta_log.log_folder(table)))}


if __name__ == "__main__":
    sys.exit(main())
