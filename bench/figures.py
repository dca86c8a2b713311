"""The figures `make bench` reports, computed from what each part measured (its JSON result)."""

from __future__ import annotations

import math
from statistics import median

from bench.overhead_selection import LAYERS


def nearest_rank(values: list[float], percent: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(percent / 100 * len(ordered)) - 1)]


def recompute_rows(results: list[dict]) -> list[dict]:
    """Per history size: median `dbt run` wall time of each variant after 1% new, and the ratios."""
    rows = []
    for result in sorted(results, key=lambda r: r["history"]):
        wall = {variant: median(run["wall_s"] for run in runs) for variant, runs in result["runs"].items()}
        rows.append({
            "history": result["history"],
            "new_rows": result["new_rows_per_round"],
            "rounds": result["rounds"],
            "wall_s": wall,
            "execute_s": {variant: median(run["execute_s"] for run in runs)
                          for variant, runs in result["runs"].items()},
            "first_run_s": {variant: run["wall_s"] for variant, run in result["first_run"].items()},
            "recompute_over_incremental": wall["table"] / wall["streaming"],
            "merge_over_incremental": wall["incremental"] / wall["streaming"],
            "gold_rows": result["gold_rows"],
            "gold_differences": result["gold_differences"],
        })
    return rows


def overhead_summary(result: dict) -> dict:
    """Medians per side; dbt_over_handwritten is the ratio of the median whole wall times."""
    def medians(runs: list[dict]) -> dict:
        summary = {key: median(run[key] for run in runs)
                   for key in ("wall_s", "imports_s", "jvm_start_s", "processing_s")}
        if "dbt_s" in runs[0]:
            summary["dbt_other_s"] = median(run["dbt_s"] - run["processing_s"] for run in runs)
        return summary

    sides = {side: medians(runs) for side, runs in result["runs"].items()}
    all_gold = [run["gold_rows"] for runs in result["runs"].values() for run in runs]
    return {
        "sides": sides,
        "dbt_over_handwritten": sides["dbt"]["wall_s"] / sides["handwritten"]["wall_s"],
        "same_gold": all(gold == all_gold[0] for gold in all_gold),
    }


def throughput_rows(result: dict) -> list[dict]:
    """Per streaming model: rows read / time its batches took, median over the runs of each side."""
    rows = []
    for model, layer in LAYERS.items():
        row = {"model": model, "layer": layer}
        for side, runs in result["runs"].items():
            rates = [run["streams"][model]["rows"] / (run["streams"][model]["batch_ms"] / 1000)
                     for run in runs if run["streams"][model]["batch_ms"]]
            row[side] = median(rates) if rates else None
            row["rows"] = runs[0]["streams"][model]["rows"]
            row[f"{side}_batches"] = runs[0]["streams"][model]["batches"]
        rows.append(row)
    return rows


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
