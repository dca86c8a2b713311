"""`make bench-latency`: always-on latency and the per-batch cost of update vs complete mode.

    python -m bench.always_on [--landings 200] [--mode-keys 1000000] [--parts latency,all_models,modes]

Three measurements, each in processes of its own: the three-hop path with a 500 ms trigger
(bench/latency.py, with its per-hop and per-phase breakdown), the same landings with all nine
demo models serving, and bench/update_vs_complete.py at --mode-keys in both batch shapes. It
rewrites sections 3 and 5 of docs/BENCHMARKS.md (the others keep the run that wrote them) and
ends with the line
`bench latency: p50_ms=<n> p95_ms=<n> all_models_p50_ms=<n> update_over_complete_1M_windows=<x> update_over_complete_1M_random=<x>`.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from bench.benchmarks_doc import latency_section, modes_section, replace_section
from bench.child_process import child_result
from bench.figures import latency_summary
from bench.fresh_lakehouse import empty_folder
from bench.latency import measure_latency
from bench.machine import load_average
from python_runners.runtime.lakehouse import REPO_ROOT

TARGETS = {"p50_ms": 2000, "p95_ms": 5000, "all_models_p50_ms": 5000}
PARTS = ("latency", "all_models", "modes")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.always_on", description=__doc__.split("\n")[0])
    parser.add_argument("--landings", type=int, default=200, help="files landed per latency run")
    parser.add_argument("--landing-interval", type=float, default=0.5, help="seconds between landings")
    parser.add_argument("--trigger", default="500 milliseconds", help="the service's trigger")
    parser.add_argument("--mode-keys", default="1000000", help="key counts for update vs complete")
    parser.add_argument("--parts", default=",".join(PARTS),
                        help=f"which measurements, of {','.join(PARTS)}; a section left out keeps its figures")
    parser.add_argument("--doc", type=Path, default=REPO_ROOT / "docs" / "BENCHMARKS.md")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    run = {"started_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M"),
           "command": "python -m bench.always_on " + shlex.join(argv if argv is not None else sys.argv[1:]),
           "load_start": load_average()}
    logs, results_dir = empty_folder("logs"), empty_folder("results")
    print(f"bench latency: logs in {logs}", flush=True)

    def step(name: str, measure):
        step_started = time.monotonic()
        print(f"bench latency: {name} ...", flush=True)
        result = measure()
        (results_dir / f"{name}.json").write_text(json.dumps(result, indent=1))
        print(f"bench latency: {name} done in {(time.monotonic() - step_started) / 60:.1f} min", flush=True)
        return result

    parts = set(args.parts.split(","))
    three_hops = step("latency", lambda: measure_latency(
        args.trigger, args.landings, args.landing_interval, logs)) if "latency" in parts else None
    all_models = step("latency_all_models", lambda: measure_latency(
        args.trigger, args.landings, args.landing_interval, logs, all_models=True)) if "all_models" in parts else None
    modes = step("modes", lambda: child_result(
        ["bench.update_vs_complete", "--keys", args.mode_keys, "--shapes", "windows,random"],
        logs / "modes.log", results_dir / "modes_raw.json")) if "modes" in parts else None

    run["duration_min"] = (time.monotonic() - started) / 60
    run["load_end"] = load_average()
    text = args.doc.read_text() if args.doc.exists() else "# Benchmarks\n"
    sections = ([latency_section(three_hops, all_models, run)] if three_hops else []) + (
        [modes_section(modes, run)] if modes else [])
    for section in sections:
        text = replace_section(text, section)
    args.doc.write_text(text)
    print()
    print("\n".join(line for section in sections for line in section))
    print(f"bench latency: wrote {args.doc} ({run['duration_min']:.1f} min)")
    figures = summary_figures(three_hops, all_models, modes)
    for name, target in TARGETS.items():
        value = figures.get(name)
        if value is not None:
            print(f"bench latency: {name} {value:.0f} (target < {target}): {'met' if value < target else 'NOT met'}")
    print("bench latency: " + " ".join(
        f"{name}={'n/a' if value is None else format(value, '.0f' if name.endswith('_ms') else '.2f')}"
        for name, value in figures.items()))
    return 0


def summary_figures(three_hops: dict | None, all_models: dict | None, modes: dict | None) -> dict:
    latency = latency_summary(three_hops) if three_hops else {}
    modes = modes or {}
    figures = {
        "p50_ms": latency.get("p50_ms"),
        "p95_ms": latency.get("p95_ms"),
        "all_models_p50_ms": latency_summary(all_models)["p50_ms"] if all_models else None,
    }
    for shape in ("windows", "random"):  # complete's median batch / update's: > 1, update wins
        figures[f"update_over_complete_1M_{shape}"] = modes.get(f"update_over_complete_1M_{shape}")
    return figures


if __name__ == "__main__":
    sys.exit(main())
