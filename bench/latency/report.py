"""Section 3's figures and its part of docs/BENCHMARKS.md, from the latency runs' JSON results."""

from __future__ import annotations

from bench.harness.doc import NOT_RUN, run_line, table
from bench.harness.stats import nearest_rank

LATENCY_HEADING = "## 3. Latency, always on"
PHASES = ("latestOffset", "getBatch", "queryPlanning", "addBatch", "walCommit", "commitOffsets",
          "triggerExecution")


def hop_summary(result: dict) -> list[dict]:
    """Per hop (model), median and p95 over the landings: hop, wait before its batch, the batch."""
    rows = []
    for model in dict.fromkeys(hop["model"] for hop in result.get("hops", [])):
        hops = [hop for hop in result["hops"] if hop["model"] == model]
        rows.append({
            "model": model,
            **{f"{key}_p50": nearest_rank([hop[f"{key}_ms"] for hop in hops], 50) for key in ("hop", "wait", "batch")},
            "hop_p95": nearest_rank([hop["hop_ms"] for hop in hops], 95),
        })
    return rows


def latency_summary(result: dict) -> dict:
    latencies = result["latencies_ms"]
    return {
        "landings": len(latencies),
        "p50_ms": nearest_rank(latencies, 50),
        "p95_ms": nearest_rank(latencies, 95),
        "min_ms": min(latencies),
        "max_ms": max(latencies),
    }


def _service_row(name: str, result: dict) -> list:
    summary = latency_summary(result)
    return [name, summary["landings"],
            *(f"{summary[key]:.0f} ms" for key in ("p50_ms", "p95_ms", "min_ms", "max_ms")), result["gold_commits"]]


def latency_section(result: dict | None, all_models: dict | None = None, run: dict | None = None) -> list[str]:
    lines = [LATENCY_HEADING, ""]
    if result is None:
        return lines + [NOT_RUN, ""]
    if run:
        lines += [run_line(run), ""]
    lines += [
        f"`python -m python_runners service start --trigger \"{result['trigger']}\"` over "
        f"{', '.join(result['models'])} (the demo's path from landing to one gold table). One "
        f"small JSON file landed every {result['interval_s']} s, {len(result['latencies_ms'])} in all; "
        "latency = from the file's rename into the landing folder to the first commit of "
        "gold.device_counts that holds it (read from the Delta log's file statistics, "
        "`bench/latency/gold_commits.py`).", "",
    ]
    rows = [_service_row("three hops", result)]
    if all_models:
        rows.append(_service_row("all nine models serving", all_models))
    lines += table(["service", "landings", "p50", "p95", "min", "max", "gold commits"], rows)
    if result.get("hops"):
        lines += ["", "Per hop (three hops): from the row being visible upstream (landed, or "
                  "committed to the table before) to the commit of this model's table that holds "
                  "it; split into the wait before the micro-batch that took it started and that "
                  "batch's own duration (its progress `triggerExecution`). Medians over the "
                  "landings, and the hop's p95:", ""]
        lines += table(["hop", "p50", "p95", "wait p50", "batch p50"],
                       [[row["model"], f"{row['hop_p50']:.0f} ms", f"{row['hop_p95']:.0f} ms",
                         f"{row['wait_p50']:.0f} ms", f"{row['batch_p50']:.0f} ms"]
                        for row in hop_summary(result)])
        lines += ["", "Each query's micro-batches that read rows, median ms per phase of Spark's "
                  "progress `durationMs` (addBatch is the write: Delta's commit, and for "
                  "device_counts the state store and the complete rewrite):", ""]
        lines += table(["query", "batches", *PHASES],
                       [[query, result["batches"][query],
                         *(f"{phases.get(phase, 0):.0f}" for phase in PHASES)]
                        for query, phases in result["phases"].items()])
    if result.get("runs"):
        lines += ["", "Each run the dataflow scheduler started (three hops), median ms: the up-to-date "
                  "check of its checkpoint before it, `start()` until it returned, and from "
                  "`start()` to the query's end (its batches and the availableNow bookkeeping):", ""]
        lines += table(["query", "runs", "check", "start", "start to end"],
                       [[query, figures["runs"], f"{figures['check']:.0f}", f"{figures['start']:.0f}",
                         f"{figures['run']:.0f}"] for query, figures in result["runs"].items()])
    if all_models and all_models.get("idle_cpu_pct") is not None:
        lines += ["", f"Idle (all nine models serving, nothing landing for {all_models['idle_seconds']:g} s "
                  "after the last landing reached gold): the service's processes (Python and its JVM) "
                  f"used {all_models['idle_cpu_pct']:.1f}% of one core."]
    if result.get("own_time"):
        lines += ["", "The service's own code over the whole run (`make status` shows the same): " + ", ".join(
            f"{activity} {figures['ms'] / 1000:.1f} s in {figures['calls']} calls"
            for activity, figures in result["own_time"].items()) + "."]
    return lines + [""]
