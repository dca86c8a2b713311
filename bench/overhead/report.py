"""Sections 2 and 4: the overhead part's figures and its parts of docs/BENCHMARKS.md."""

from __future__ import annotations

from statistics import median

from bench.harness.doc import NOT_RUN, seconds, table
from bench.harness.stats import medians
from bench.overhead.selection import LAYERS


def overhead_summary(result: dict) -> dict:
    """Medians per side; dbt_over_handwritten is the ratio of the median whole wall times."""
    def side_medians(runs: list[dict]) -> dict:
        summary = medians(runs, ("wall_s", "imports_s", "jvm_start_s", "processing_s"))
        if "dbt_s" in runs[0]:
            summary["dbt_other_s"] = median(run["dbt_s"] - run["processing_s"] for run in runs)
        return summary

    sides = {side: side_medians(runs) for side, runs in result["runs"].items()}
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


def overhead_section(result: dict | None) -> list[str]:
    lines = ["## 2. Overhead: `dbt build` vs a hand-written PySpark job", ""]
    if result is None:
        return lines + [NOT_RUN, ""]
    summary = overhead_summary(result)
    lines += [
        f"The demo's recordings path (devices seed; bronze_recordings, silver_recordings, "
        f"quarantined_recordings, gold device_counts and ward_heart_rates) over {result['rows']:,} "
        f"generated recordings in {result['files']} JSON files: A is `dbt build` of those nodes "
        "(`bench/overhead/dbt_pipeline_run.py`), B the same five streaming writes written by hand in "
        "PySpark (`bench/overhead/handwritten_pipeline.py`, same session settings). Each run a fresh "
        f"process on an empty lakehouse, A B A B ... ({result['pairs']} of each); dbt parsed the project "
        "once before, as for a user's second run. Wall = process start to exit, timed from "
        "outside. Medians:", "",
    ]
    dbt, handwritten = summary["sides"]["dbt"], summary["sides"]["handwritten"]
    lines += table(
        ["side", "wall", "Python imports", "JVM start", "dbt parse/compile/hooks", "processing"],
        [["A: dbt build", *(seconds(dbt[key]) for key in ("wall_s", "imports_s", "jvm_start_s",
                                                          "dbt_other_s", "processing_s"))],
         ["B: hand-written", *(seconds(handwritten[key]) for key in ("wall_s", "imports_s", "jvm_start_s")),
          "-", seconds(handwritten["processing_s"])]],
    )
    lines += ["", f"**dbt_over_handwritten = {summary['dbt_over_handwritten']:.2f}** (median wall A / "
              f"median wall B). Both sides' gold tables identical in every run: "
              f"{'yes' if summary['same_gold'] else 'NO'}.", "", "Every run:", ""]
    lines += table(
        ["run", "side", "wall", "JVM start", "processing"],
        [[index + 1, side, seconds(run["wall_s"]), seconds(run["jvm_start_s"]), seconds(run["processing_s"])]
         for index in range(result["pairs"]) for side, runs in result["runs"].items()
         for run in [runs[index]]],
    )
    return lines + [""]


def throughput_section(result: dict | None) -> list[str]:
    lines = ["## 4. Throughput per layer", ""]
    if result is None:
        return lines + [NOT_RUN, ""]
    lines += [
        f"From part 2's runs over {result['rows']:,} recordings: rows each streaming write read "
        "divided by the time its micro-batches took (the progress table `_stream_progress` for "
        "A, the queries' progress for B), median over the runs. This is the rate a backlog "
        "drains at, the most a query sustains at steady state on this machine.", "",
    ]
    lines += table(
        ["layer", "model", "rows", "batches", "rows/s, dbt", "rows/s, hand-written"],
        [[row["layer"], row["model"], f"{row['rows']:,}", row["dbt_batches"],
          f"{row['dbt']:,.0f}" if row["dbt"] else "-",
          f"{row['handwritten']:,.0f}" if row["handwritten"] else "-"]
         for row in throughput_rows(result)],
    )
    return lines + [""]
