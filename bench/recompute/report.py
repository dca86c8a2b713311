"""Section 1's figures and its part of docs/BENCHMARKS.md, from each history size's JSON result."""

from __future__ import annotations

from statistics import median

from bench.harness.doc import NOT_RUN, seconds, table

VARIANT_COLUMNS = ("streaming", "table", "incremental")


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


def recompute_section(results: list[dict] | None) -> list[str]:
    lines = ["## 1. Incremental vs recompute", ""]
    if results is None:
        return lines + [NOT_RUN, ""]
    rows = recompute_rows(results)
    lines += [
        "A silver model (clean each event) and a gold model (totals per account, 10,000 accounts) "
        "over a Delta table of H events, with the same SQL as this project's streaming tables, as "
        "dbt-spark `table` (recompute everything) and as dbt-spark `incremental` (merge on the "
        "unique key, filtered to events newer than the target's latest: the usual pattern; gold "
        "recomputes the accounts with new events). History built first, and the JVM warmed up with "
        "the same kinds of work on 1,000 other rows, not measured; then each "
        f"round appends 1% new events and times one `dbt run` of each variant (in one process, "
        f"so no JVM start; dbt's parse included). Median of {rows[0]['rounds']} rounds (the "
        "streaming gold model's first round also runs, once, the empty batch that moves it past "
        "its input's initial snapshot, a rewrite in complete mode). After "
        "the last round the three gold tables hold the same rows (checked with exceptAll both ways).",
        "",
    ]
    lines += table(
        ["history H", "new rows", "streaming_table", "table (recompute)", "incremental (merge)",
         "recompute / streaming", "merge / streaming", "gold tables agree"],
        [[f"{row['history']:,}", f"{row['new_rows']:,}", seconds(row["wall_s"]["streaming"]),
          seconds(row["wall_s"]["table"]), seconds(row["wall_s"]["incremental"]),
          f"{row['recompute_over_incremental']:.2f}", f"{row['merge_over_incremental']:.2f}",
          "yes" if not row["gold_differences"] else "NO: " + "; ".join(row["gold_differences"])]
         for row in rows],
    )
    lines += ["", "Models' own execution time (dbt's execute phase, median) and the first run "
              "over the whole history:", ""]
    lines += table(
        ["history H", "streaming_table", "table", "incremental", "first run: streaming_table",
         "first run: table", "first run: incremental"],
        [[f"{row['history']:,}", *(seconds(row["execute_s"][v]) for v in VARIANT_COLUMNS),
          *(seconds(row["first_run_s"][v]) for v in VARIANT_COLUMNS)]
         for row in rows],
    )
    return lines + [""]
