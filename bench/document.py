"""docs/BENCHMARKS.md as `python -m bench` writes it whole: the machine, then each part's section in
the document's order (each rendered by its own package), then the closing summary line."""

from __future__ import annotations

from bench.cdc.doc import cdc_section
from bench.harness.machine import machine_section
from bench.latency.report import latency_section, latency_summary
from bench.modes.report import modes_section
from bench.overhead.report import overhead_section, overhead_summary, throughput_section
from bench.recompute.report import recompute_rows, recompute_section
from bench.run_cost.doc import run_cost_section


def summary_line(results: dict) -> str:
    parts = []
    if results.get("recompute"):
        largest = recompute_rows(results["recompute"])[-1]
        parts.append(f"recompute_over_incremental={largest['recompute_over_incremental']:.2f} "
                     f"at H={largest['history']}")
    else:
        parts.append("recompute_over_incremental=n/a")
    parts.append("dbt_over_handwritten=" + (
        f"{overhead_summary(results['overhead'])['dbt_over_handwritten']:.2f}"
        if results.get("overhead") else "n/a"))
    parts.append("latency_p50_ms=" + (
        f"{latency_summary(results['latency'])['p50_ms']:.0f}" if results.get("latency") else "n/a"))
    return "bench: " + " ".join(parts)


def body(results: dict) -> list[str]:
    return (
        recompute_section(results.get("recompute")) + overhead_section(results.get("overhead"))
        + latency_section(results.get("latency")) + throughput_section(results.get("overhead"))
        + modes_section(results.get("modes")) + run_cost_section(results.get("run_cost"))
        + cdc_section(results.get("cdc"))
    )


def document(run: dict, results: dict) -> str:
    lines = [
        "# Benchmarks", "",
        "Written by `make bench` (`python -m bench`); every figure below was measured in the run "
        "described here. Run it again to measure your machine; sizes are options "
        "(`make bench BENCH_ARGS='--help'`).", "",
        *machine_section(run), *body(results), "```", summary_line(results), "```", "",
    ]
    return "\n".join(lines)
