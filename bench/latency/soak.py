"""`make bench-soak`: the always-on service for half an hour; does it slow down as tables grow?

    python -m bench.latency.soak [--minutes 30] [--window-minutes 5]

The latency benchmark's set-up (bench/latency/measure.py: the three-hop path served on_new_data, one small
file every 0.5 s), run for --minutes. It compares the median latency of the files landed in the
first --window-minutes with that of the last, and counts what piles up: each table's live data
files and the files in its _delta_log. Prints
`bench soak: first_p50_ms=<n> last_p50_ms=<n> last_over_first=<x> ...`; the target is
last_over_first <= 1.2. Not part of `make test`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from bench.harness.fresh_lakehouse import bench_folder, empty_folder
from bench.harness.stats import nearest_rank
from bench.latency.measure import HOPS, measure_latency
from python_runners.testing import delta_log

TARGET = 1.2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.latency.soak", description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--window-minutes", type=float, default=5)
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between landings")
    parser.add_argument("--trigger", default="on_new_data")
    args = parser.parse_args(argv)
    landings = int(args.minutes * 60 / args.interval)
    window = int(args.window_minutes * 60 / args.interval)
    logs = empty_folder("soak_logs")
    started = time.monotonic()
    print(f"bench soak: {landings} landings over {args.minutes:g} min; logs in {logs}", flush=True)
    result = measure_latency(args.trigger, landings, args.interval, logs)
    latencies = result["latencies_ms"]
    first, last = nearest_rank(latencies[:window], 50), nearest_rank(latencies[-window:], 50)
    warehouse = bench_folder("latency") / "warehouse"
    piles = {model: table_files(warehouse / schema / model) for model, schema in HOPS}
    (logs / "soak.json").write_text(json.dumps({**result, "files": piles}))
    for model, counts in piles.items():
        print(f"bench soak: {model}: {counts['live_data_files']} live data files, "
              f"{counts['log_files']} files in _delta_log")
    print(f"bench soak: done in {(time.monotonic() - started) / 60:.1f} min; "
          f"last_over_first {last / first:.2f} (target <= {TARGET}): "
          f"{'met' if last / first <= TARGET else 'NOT met'}")
    print(f"bench soak: first_p50_ms={first:.0f} last_p50_ms={last:.0f} last_over_first={last / first:.2f} "
          + " ".join(f"{model}_files={counts['live_data_files']}" for model, counts in piles.items()))
    return 0


def table_files(table: Path) -> dict[str, int]:
    """Live data files by replaying the log's commits (added minus removed), and the log's size."""
    return {"live_data_files": len(delta_log.live_data_files(table)),
            "log_files": len(os.listdir(delta_log.log_folder(table)))}


if __name__ == "__main__":
    sys.exit(main())
