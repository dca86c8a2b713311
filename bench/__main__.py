"""`make bench`: every benchmark in one run; prints the figures and writes docs/BENCHMARKS.md.

Each part runs its Spark work in processes of its own (this one starts no JVM), on its own
lakehouse under .lakehouse/bench/. Logs of every child process go to .lakehouse/bench/logs/, each
part's raw results to .lakehouse/bench/results/. The last two lines printed sum it up:
`bench: recompute_over_incremental=<x> at H=<rows> dbt_over_handwritten=<x> latency_p50_ms=<n>` and
`bench run-cost: noop_over_start=<x> recompute_over_incremental=<x>@1M <x>@10M ...` (part 6, after
a line per target saying whether it is met). `--parts run_cost` (`make bench-run-cost`, with
`--quick`) runs part 6 alone and rewrites only its section of docs/BENCHMARKS.md; so does
`--parts cdc` (section 8, `make bench-cdc` runs the same alone), and `--parts run_cost,cdc` both.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.cdc.doc import CDC_HEADING, cdc_section
from bench.document import body, document, summary_line
from bench.harness.doc import BENCHMARKS_DOC, keep_sections, replace_section, section_of
from bench.harness.machine import describe
from bench.harness.run import Run, Steps, command_line
from bench.latency.measure import measure_latency
from bench.overhead.measure import measure_overhead
from bench.run_cost import fixed_cost
from bench.run_cost.doc import RUN_COST_HEADING, run_cost_section
from bench.run_cost.figures import figures, target_lines
from bench.run_cost.figures import summary_line as run_cost_summary_line
from bench.run_cost.measure import measure_run_cost

PARTS = ("recompute", "overhead", "latency", "modes", "run_cost", "cdc")
# Parts whose section a run of them alone rewrites in place (the other sections keep their run's
# figures), and which a run without them keeps as they were.
OWN_SECTIONS = {"run_cost": (RUN_COST_HEADING, run_cost_section), "cdc": (CDC_HEADING, cdc_section)}
# --quick: part 6 alone, its fixed cost (no parts 1 and 2), within about 10 minutes on 2 cores.
QUICK = {"history": "1000000", "rounds": 3, "overhead_rows": 1_000_000, "overhead_files": 10, "pairs": 1,
         "noop_pairs": 5}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--parts", default=",".join(PARTS), help=f"which parts, of {','.join(PARTS)}")
    parser.add_argument("--history", default="1000000,10000000",
                        help="part 1: history sizes H in rows (default 1M,10M)")
    # Three, so the median is a steady run: the first run after a stream's first run also runs
    # the empty batch that moves a stateful query past Delta's initial snapshot (initial_snapshot.py).
    parser.add_argument("--rounds", type=int, default=3, help="part 1: measured runs per variant and H")
    parser.add_argument("--overhead-rows", type=int, default=5_000_000, help="part 2: recordings")
    parser.add_argument("--overhead-files", type=int, default=40, help="part 2: files they land in")
    parser.add_argument("--pairs", type=int, default=2, help="part 2: A B pairs of runs")
    parser.add_argument("--landings", type=int, default=200, help="part 3: files landed")
    parser.add_argument("--landing-interval", type=float, default=0.5, help="part 3: seconds between")
    parser.add_argument("--trigger", default="on_new_data", help="part 3: the service's trigger (or a processing-time interval)")
    parser.add_argument("--mode-keys", default="10000,100000", help="part 5: key counts")
    parser.add_argument("--noop-pairs", type=int, default=3, help="part 6: A B pairs of no-op runs")
    parser.add_argument("--cdc-keys", default="100000,1000000", help="part 8: key counts of the CDC apply")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes: " + ", ".join(f"--{key.replace('_', '-')} {value}"
                                                         for key, value in QUICK.items()))
    parser.add_argument("--doc", type=Path, default=BENCHMARKS_DOC)
    args = parser.parse_args(argv)
    if args.quick:  # its sizes as the defaults; sizes given on the command line still win
        parser.set_defaults(**QUICK)
        args = parser.parse_args(argv)
    args.parts = [part.strip() for part in args.parts.split(",") if part.strip()]
    unknown = set(args.parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts {sorted(unknown)}; choose from {', '.join(PARTS)}")
    return args


def quick_note(args: argparse.Namespace) -> str | None:
    if not args.quick:
        return None
    return (f"the fixed cost alone (parts 1 and 2 measured only when asked for with --parts), "
            f"{args.noop_pairs} pairs of each")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    this_run = Run(command_line("python -m bench", argv), machine=describe())
    steps = Steps("bench")
    results: dict = {}

    def part(name: str, measure) -> None:
        if name in args.parts:
            results[name] = steps.run(name, measure)

    def recompute() -> list[dict]:
        return [
            steps.child(["bench.recompute.incremental_vs_recompute", "--history", history, "--rounds",
                         str(args.rounds)], f"recompute_{history}", f"recompute_{history}")
            for history in args.history.split(",")
        ]

    def overhead() -> dict:
        return measure_overhead(args.overhead_rows, args.overhead_files, args.pairs, steps.logs)

    part("recompute", recompute)
    part("overhead", overhead)
    part("latency", lambda: measure_latency(args.trigger, args.landings, args.landing_interval, steps.logs))
    part("modes", lambda: steps.child(["bench.modes", "--keys", args.mode_keys], "modes", "modes_raw"))
    if args.quick and "run_cost" in args.parts:
        print(f"bench run-cost: quick mode: {quick_note(args)}", flush=True)
    part("run_cost", lambda: measure_run_cost(
        args.noop_pairs, steps.logs, this_run.record["command"], quick_note(args),
        earlier=results, measure={"recompute": recompute, "overhead": overhead}))
    part("cdc", lambda: steps.child(["bench.cdc", "--keys", args.cdc_keys, "--no-doc"], "cdc", "cdc_raw"))

    run = this_run.end()
    args.doc.parent.mkdir(parents=True, exist_ok=True)
    only_own = bool(args.parts) and set(args.parts) <= set(OWN_SECTIONS)
    if only_own and args.doc.exists():
        # The other sections keep the figures of the run that wrote them.
        text = args.doc.read_text()
        for name in args.parts:
            text = replace_section(text, OWN_SECTIONS[name][1](results[name]))
        args.doc.write_text(text)
    else:
        text = document(run, results)
        earlier = args.doc.read_text() if args.doc.exists() else ""
        for name, (heading, _) in OWN_SECTIONS.items():
            kept = section_of(earlier, heading) if name not in results else None
            text = replace_section(text, kept) if kept else text
        # Sections this run does not write (the soak's history, the benchmarks run apart) stay.
        args.doc.write_text(keep_sections(text, earlier))
    print()
    print("\n".join(
        [line for name in args.parts for line in OWN_SECTIONS[name][1](results[name])] if only_own
        else body(results)))
    print(f"bench: wrote {args.doc} ({run['duration_min']:.1f} min)")
    if not only_own:
        print(summary_line(results))
    if "run_cost" in results:
        print("\n".join(target_lines(results["run_cost"])))
        print("\n".join(fixed_cost.target_lines(results["run_cost"])))
        print(run_cost_summary_line(figures(results["run_cost"])))
        print(fixed_cost.summary_line(results["run_cost"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
