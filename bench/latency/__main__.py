"""`make bench-latency`: always-on latency and the per-batch cost of update vs complete mode.

    python -m bench.latency [--landings 200] [--mode-keys 1000000] [--parts latency,all_models,modes]

Three measurements, each in processes of its own: the three-hop path served `on_new_data` (each
model runs when an input commits; --trigger '500 milliseconds' measures the clock-driven
service instead), with its per-hop, per-phase and per-run breakdown (bench/latency/measure.py);
the same landings with all nine demo models serving, then --idle-seconds with nothing landing,
the service's CPU share (idle_cpu_pct, of one core); and `python -m bench.modes` at --mode-keys
in both batch shapes. It
rewrites sections 3 and 5 of docs/BENCHMARKS.md (the others keep the run that wrote them) and
ends with the line
`bench latency: p50_ms=<n> p95_ms=<n> all_models_p50_ms=<n> idle_cpu_pct=<x> update_over_complete_1M_windows=<x> update_over_complete_1M_random=<x>`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.harness.doc import BENCHMARKS_DOC, read_document, replace_section
from bench.harness.machine import versions_tag
from bench.harness.run import Run, Steps, command_line
from bench.latency.measure import measure_latency
from bench.latency.report import latency_section, latency_summary
from bench.modes.report import modes_section

TARGETS = {"p50_ms": 3000, "p95_ms": 6000, "all_models_p50_ms": 6000, "idle_cpu_pct": 5}
PARTS = ("latency", "all_models", "modes")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.latency", description=__doc__.split("\n")[0])
    parser.add_argument("--landings", type=int, default=200, help="files landed per latency run")
    parser.add_argument("--landing-interval", type=float, default=0.5, help="seconds between landings")
    parser.add_argument("--trigger", default="on_new_data", help="the service's trigger")
    parser.add_argument("--idle-seconds", type=float, default=60,
                        help="after the all-models run's landings: how long to measure the idle service's CPU")
    parser.add_argument("--mode-keys", default="1000000", help="key counts for update vs complete")
    parser.add_argument("--parts", default=",".join(PARTS),
                        help=f"which measurements, of {','.join(PARTS)}; a section left out keeps its figures")
    parser.add_argument("--doc", type=Path, default=BENCHMARKS_DOC)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run = Run(command_line("python -m bench.latency", argv))
    steps = Steps("bench latency")

    parts = set(args.parts.split(","))
    three_hops = steps.run("latency", lambda: measure_latency(
        args.trigger, args.landings, args.landing_interval, steps.logs)) if "latency" in parts else None
    all_models = steps.run("latency_all_models", lambda: measure_latency(
        args.trigger, args.landings, args.landing_interval, steps.logs, all_models=True,
        idle_seconds=args.idle_seconds)) \
        if "all_models" in parts else None
    modes = steps.run("modes", lambda: steps.child(
        ["bench.modes", "--keys", args.mode_keys, "--shapes", "windows,random"], "modes", "modes_raw")) \
        if "modes" in parts else None

    record = run.end()
    text = read_document(args.doc)
    sections = ([latency_section(three_hops, all_models, record)] if three_hops else []) + (
        [modes_section(modes, record)] if modes else [])
    for section in sections:
        text = replace_section(text, section)
    args.doc.write_text(text)
    print()
    print("\n".join(line for section in sections for line in section))
    print(f"bench latency: wrote {args.doc} ({record['duration_min']:.1f} min)")
    figures = summary_figures(three_hops, all_models, modes)
    for name, target in TARGETS.items():
        value = figures.get(name)
        if value is not None:
            print(f"bench latency: {name} {value:.1f} (target < {target}): {'met' if value < target else 'NOT met'}")
    print("bench latency: " + " ".join(
        f"{name}={'n/a' if value is None else format(value, '.0f' if name.endswith('_ms') else '.2f')}"
        for name, value in figures.items()) + " " + versions_tag())
    return 0


def summary_figures(three_hops: dict | None, all_models: dict | None, modes: dict | None) -> dict:
    latency = latency_summary(three_hops) if three_hops else {}
    modes = modes or {}
    figures = {
        "p50_ms": latency.get("p50_ms"),
        "p95_ms": latency.get("p95_ms"),
        "all_models_p50_ms": latency_summary(all_models)["p50_ms"] if all_models else None,
        "idle_cpu_pct": (all_models or {}).get("idle_cpu_pct"),
    }
    for shape in ("windows", "random"):  # complete's median batch / update's: > 1, update wins
        figures[f"update_over_complete_1M_{shape}"] = modes.get(f"update_over_complete_1M_{shape}")
    return figures


if __name__ == "__main__":
    sys.exit(main())
