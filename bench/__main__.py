"""`make bench`: every benchmark in one run; prints the figures and writes docs/BENCHMARKS.md.

Each part runs its Spark work in processes of its own (this one starts no JVM), on its own
lakehouse under .lakehouse/bench/. Logs of every child process go to .lakehouse/bench/logs/, each
part's raw results to .lakehouse/bench/results/. The last line printed sums it up:
`bench: recompute_over_incremental=<x> at H=<rows> dbt_over_handwritten=<x> latency_p50_ms=<n>`.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from bench.benchmarks_doc import body, document, summary_line
from bench.fresh_lakehouse import empty_folder
from bench.latency import measure_latency
from bench.machine import describe, load_average
from bench.overhead import measure_overhead
from python_runners.lakehouse import REPO_ROOT

PARTS = ("recompute", "overhead", "latency", "modes")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--parts", default=",".join(PARTS), help=f"which parts, of {','.join(PARTS)}")
    parser.add_argument("--history", default="1000000,10000000",
                        help="part 1: history sizes H in rows (default 1M,10M)")
    parser.add_argument("--rounds", type=int, default=2, help="part 1: measured runs per variant and H")
    parser.add_argument("--overhead-rows", type=int, default=5_000_000, help="part 2: recordings")
    parser.add_argument("--overhead-files", type=int, default=40, help="part 2: files they land in")
    parser.add_argument("--pairs", type=int, default=2, help="part 2: A B pairs of runs")
    parser.add_argument("--landings", type=int, default=200, help="part 3: files landed")
    parser.add_argument("--landing-interval", type=float, default=0.5, help="part 3: seconds between")
    parser.add_argument("--trigger", default="500 milliseconds", help="part 3: processing-time trigger")
    parser.add_argument("--mode-keys", default="10000,100000", help="part 5: key counts")
    parser.add_argument("--doc", type=Path, default=REPO_ROOT / "docs" / "BENCHMARKS.md")
    args = parser.parse_args(argv)
    args.parts = [part.strip() for part in args.parts.split(",") if part.strip()]
    unknown = set(args.parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts {sorted(unknown)}; choose from {', '.join(PARTS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    run = {
        "started_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "command": "python -m bench " + shlex.join(argv if argv is not None else sys.argv[1:]),
        "load_start": load_average(),
        "machine": describe(),
    }
    logs, results_dir = empty_folder("logs"), empty_folder("results")
    print(f"bench: logs in {logs}", flush=True)
    results: dict = {}

    def part(name: str, measure) -> None:
        if name not in args.parts:
            return
        part_started = time.monotonic()
        print(f"bench: {name} ...", flush=True)
        results[name] = measure()
        (results_dir / f"{name}.json").write_text(json.dumps(results[name], indent=1))
        print(f"bench: {name} done in {(time.monotonic() - part_started) / 60:.1f} min", flush=True)

    part("recompute", lambda: [
        _child_result(["bench.incremental_vs_recompute", "--history", history, "--rounds", str(args.rounds)],
                      logs / f"recompute_{history}.log", results_dir / f"recompute_{history}.json")
        for history in args.history.split(",")
    ])
    part("overhead", lambda: measure_overhead(args.overhead_rows, args.overhead_files, args.pairs, logs))
    part("latency", lambda: measure_latency(args.trigger, args.landings, args.landing_interval, logs))
    part("modes", lambda: _child_result(
        ["bench.update_vs_complete", "--keys", args.mode_keys], logs / "modes.log", results_dir / "modes_raw.json"))

    run["duration_min"] = (time.monotonic() - started) / 60
    run["load_end"] = load_average()
    args.doc.parent.mkdir(parents=True, exist_ok=True)
    args.doc.write_text(document(run, results))
    print()
    print("\n".join(body(results)))
    print(f"bench: wrote {args.doc} ({run['duration_min']:.1f} min)")
    print(summary_line(results))
    return 0


def _child_result(module_args: list[str], log: Path, result: Path):
    """Run `python -m <module> ... --result <file>` with its output in `log`; its JSON result."""
    with open(log, "w") as out:
        finished = subprocess.run([sys.executable, "-m", *module_args, "--result", str(result)],
                                  stdout=out, stderr=subprocess.STDOUT)
    if finished.returncode != 0:
        raise RuntimeError(f"`python -m {module_args[0]}` failed ({finished.returncode}); see {log}")
    return json.loads(result.read_text())


if __name__ == "__main__":
    sys.exit(main())
