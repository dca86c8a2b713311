"""The fixed-cost figures of the run-cost part: what every command pays whatever the data.

Pure functions of the part's JSON result (bench/run_cost/measure.py), tested without Spark.

- noop_over_start: the no-op `dbt run` of the streaming and cdc models over the project's
  session start plus `show tables`;
- noop_over_plain_start: the same run over a plain PySpark session with Delta and Hive;
- idle_model_ms: the median of the no-op run's models' execution (dbt's timing), medians of runs;
- jvm_start_s: the project's session start (startup_seconds) with the class-data archive, and
  without it (`before`);
- one_pct_over_noop: a fresh run with 1% new over one with nothing new;
- cdc_1k_scd1_s, cdc_1k_scd2_s: a cdc_table's batch of 1,000 changes into 1,000,000 keys.
"""

from __future__ import annotations

from statistics import median

from bench.harness.stats import medians
from bench.run_cost.figures import lines_per_target, noop_phases

TARGETS = {  # figure -> (comparison, target)
    "noop_over_plain_start": ("<=", 1.0),
    "noop_over_start": ("<=", 1.3),
    "idle_model_ms": ("<=", 100),
    "one_pct_over_noop": ("<=", 1.3),
    "cdc_1k_scd1_s": ("<=", 1.5),
    "cdc_1k_scd2_s": ("<=", 2.5),
}


def _wall(run: dict) -> float:
    return run["wall_s"] - run.get("land_s", 0.0)


def side_walls(noop: dict) -> dict[str, float]:
    """Median wall per side of the no-op pairs (and of the 1% pairs), landing excluded."""
    walls = {side: median(_wall(run) for run in runs) for side, runs in noop["runs"].items()}
    for side, runs in (noop.get("one_pct") or {}).get("runs", {}).items():
        walls[f"one_pct:{side}"] = median(_wall(run) for run in runs)
    return walls


def idle_model_ms(noop: dict) -> float | None:
    runs = noop["runs"]["dbt_run"]
    per_run = [median(run["models_s"].values()) for run in runs if run.get("models_s")]
    return median(per_run) * 1000 if per_run else None


def jvm_start_s(noop: dict) -> dict[str, float | None]:
    def start(side: str) -> float | None:
        runs = noop["runs"].get(side)
        return median(run["session_s"] for run in runs) if runs else None

    return {"after": start("session_start"), "before": start("session_start_no_archive"),
            "plain": start("plain_start")}


def cdc_seconds(cdc: dict | None, stored_as: str) -> float | None:
    rows = [row for row in (cdc or {}).get("rows", []) if row["stored_as"] == stored_as]
    return rows[0]["median_s"] if rows else None


def figures(result: dict) -> dict[str, float | None]:
    found: dict[str, float | None] = dict.fromkeys(TARGETS)
    noop = result.get("noop")
    if noop and "plain_start" in noop["runs"]:
        walls = side_walls(noop)
        found["noop_over_start"] = walls["dbt_run"] / walls["session_start"]
        found["noop_over_plain_start"] = walls["dbt_run"] / walls["plain_start"]
        found["idle_model_ms"] = idle_model_ms(noop)
        if "one_pct:one_pct" in walls:
            found["one_pct_over_noop"] = walls["one_pct:one_pct"] / walls["one_pct:noop"]
    found["cdc_1k_scd1_s"] = cdc_seconds(result.get("cdc_1k"), "scd1")
    found["cdc_1k_scd2_s"] = cdc_seconds(result.get("cdc_1k"), "scd2")
    return found


def _value(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def summary_line(result: dict) -> str:
    found = figures(result)
    starts = jvm_start_s(result["noop"]) if result.get("noop") else {}
    return (
        f"bench fixed-cost: noop_over_start={_value(found['noop_over_start'])} "
        f"noop_over_plain_start={_value(found['noop_over_plain_start'])} "
        f"idle_model_ms={_value(found['idle_model_ms'], 0)} "
        f"jvm_start_s={_value(starts.get('before'), 1)}->{_value(starts.get('after'), 1)} "
        f"one_pct_over_noop={_value(found['one_pct_over_noop'])} "
        f"cdc_1k_scd1_s={_value(found['cdc_1k_scd1_s'])} cdc_1k_scd2_s={_value(found['cdc_1k_scd2_s'])}"
    )


def holder(figure: str, result: dict) -> str:
    """The phases that hold a figure over its target, with their seconds."""
    noop = result["noop"]
    if figure in ("noop_over_start", "noop_over_plain_start", "idle_model_ms"):
        run = medians(_phases(run) for run in noop["runs"]["dbt_run"])
        other = "session_start" if figure == "noop_over_start" else "plain_start"
        against = medians(_phases(run) for run in noop["runs"][other])
        if figure == "idle_model_ms":
            models = medians(run["models_s"] for run in noop["runs"]["dbt_run"])
            slowest = sorted(models.items(), key=lambda item: -item[1])[:3]
            return "slowest idle models: " + ", ".join(f"{name} {seconds * 1000:.0f} ms" for name, seconds in slowest)
        return (f"the no-op run's phases against {other}'s: "
                + ", ".join(f"{name} {run.get(name, 0.0):.1f} s vs {against.get(name, 0.0):.1f} s"
                            for name in ("imports_s", "session_s", "dbt_other_s", "models_s", "query_s")))
    if figure == "one_pct_over_noop":
        runs = noop["one_pct"]["runs"]
        new, idle = (medians(_phases(run) for run in runs[side]) for side in ("one_pct", "noop"))
        return ("the 1% run's phases against the no-op's: "
                + ", ".join(f"{name} {new.get(name, 0.0):.1f} s vs {idle.get(name, 0.0):.1f} s"
                            for name in ("session_s", "dbt_other_s", "models_s")))
    stored_as = figure.split("_")[2]
    row = next(row for row in result["cdc_1k"]["rows"] if row["stored_as"] == stored_as)
    phases = row.get("phases_median_s", {})
    largest = sorted(((name, seconds) for name, seconds in phases.items()
                      if not name.endswith("_jobs") and name != "foreach_batch"),  # the whole, not a phase
                     key=lambda item: -item[1])[:3]
    return "largest phases per batch: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in largest)


def _phases(run: dict) -> dict[str, float]:
    return noop_phases(run, run["wall_s"])


def target_lines(result: dict) -> list[str]:
    return lines_per_target("fixed-cost", figures(result), TARGETS, lambda figure: holder(figure, result))
