"""The run-cost part's figures, each against its target, and which phase holds one that is not met.

Pure functions of the part's JSON result (bench/run_cost/measure.py), so they are tested without Spark.
"""

from __future__ import annotations

from statistics import median
from typing import Callable

from bench.harness.machine import versions_tag
from bench.harness.stats import medians, size_label
from bench.overhead.report import overhead_summary
from bench.recompute.report import recompute_rows

# figure -> (comparison, target)
TARGETS = {
    "noop_over_start": ("<=", 1.3),
    "recompute_over_incremental@1M": (">=", 1.5),
    "recompute_over_incremental@10M": (">=", 10.0),
    "first_run_over_table": ("<=", 1.2),
    "dbt_over_handwritten": ("<=", 1.15),
    # attached to a warm driver (bench/run_cost/attached.py)
    "noop_attached_over_plain_start": ("<=", 0.5),
    "one_pct_attached_over_noop_attached": ("<=", 1.3),
    "show_attached_s": ("<=", 5.0),
    "driver_rss_200_over_10": ("<=", 1.2),
}
NOOP_PHASES = {  # key in each run's split -> what the phase is
    "imports_s": "Python start and imports",
    "session_s": "Spark session start (JVM), or attaching to the warm driver",
    "dbt_other_s": "dbt parse, compile and the rest of dbt",
    "models_s": "models' execution",
    "hooks_s": "on-run-end hooks",
    "query_s": "`show tables`",
    "exit_s": "process exit and remainder",
}

METASTORE_SHARED = ("dbt parse, compile and the rest of dbt, beyond the metastore client's start "
                    "(B's `show tables`) that its first catalog query also pays")


def noop_phases(run: dict, wall_s: float) -> dict:
    """One run's split, its phases adding up to the wall time measured from outside."""
    phases = {key: run[key] for key in ("imports_s", "session_s", "query_s", "hooks_s") if key in run}
    if "dbt_s" in run:
        phases["models_s"] = sum(run["models_s"].values())
        phases["dbt_other_s"] = run["dbt_s"] - run["session_s"] - phases["models_s"] - run["hooks_s"]
    phases["exit_s"] = wall_s - run["inside_s"]
    return phases


def noop_summary(noop: dict) -> dict:
    """Median wall and median of each phase, per side; noop_over_start = median wall A / median wall B."""
    sides = {}
    for side, runs in noop["runs"].items():
        splits = [noop_phases(run, run["wall_s"]) for run in runs]
        sides[side] = {
            "wall_s": median(run["wall_s"] for run in runs),
            "phases": medians(splits),
            "models": medians(run["models_s"] for run in runs) if "models_s" in runs[0] else {},
        }
    return {"sides": sides,
            "noop_over_start": sides["dbt_run"]["wall_s"] / sides["session_start"]["wall_s"]}


def figures(result: dict) -> dict[str, float | None]:
    """Every figure of TARGETS; None where the run did not measure it."""
    found: dict[str, float | None] = dict.fromkeys(TARGETS)
    if result.get("noop"):
        found["noop_over_start"] = noop_summary(result["noop"])["noop_over_start"]
    rows = recompute_rows(result["recompute"]) if result.get("recompute") else []
    for row in rows:
        key = f"recompute_over_incremental@{size_label(row['history'])}"
        if key in found:
            found[key] = row["recompute_over_incremental"]
    if rows:
        first = rows[-1]["first_run_s"]
        found["first_run_over_table"] = first["streaming"] / first["table"]
    if result.get("overhead"):
        found["dbt_over_handwritten"] = overhead_summary(result["overhead"])["dbt_over_handwritten"]
    found.update(attached_figures(result))
    return found


def attached_figures(result: dict) -> dict[str, float]:
    attached = (result.get("noop") or {}).get("attached")
    if not attached:
        return {}
    # the 1% side's landing is not the run's (as one_pct_over_noop, fixed_cost.py)
    wall = {side: median(run["wall_s"] - run.get("land_s", 0.0) for run in runs)
            for side, runs in attached["runs"].items()}
    plain = median(run["wall_s"] for run in result["noop"]["runs"]["plain_start"])
    mb = {int(runs): value for runs, value in attached["memory"]["mb"].items()}
    return {
        "noop_attached_over_plain_start": wall["noop_attached"] / plain,
        "one_pct_attached_over_noop_attached": wall["one_pct_attached"] / wall["noop_three_attached"],
        "show_attached_s": attached["show"]["show_attached_s"],
        "driver_rss_200_over_10": mb[max(mb)] / mb[min(mb)],
    }


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def summary_line(found: dict[str, float | None]) -> str:
    return (
        f"bench run-cost: noop_over_start={_ratio(found['noop_over_start'])} "
        f"recompute_over_incremental={_ratio(found['recompute_over_incremental@1M'])}@1M "
        f"{_ratio(found['recompute_over_incremental@10M'])}@10M "
        f"first_run_over_table={_ratio(found['first_run_over_table'])} "
        f"dbt_over_handwritten={_ratio(found['dbt_over_handwritten'])} "
        f"noop_attached_over_plain_start={_ratio(found['noop_attached_over_plain_start'])} "
        f"one_pct_attached_over_noop_attached={_ratio(found['one_pct_attached_over_noop_attached'])} "
        f"show_attached_s={_ratio(found['show_attached_s'])} "
        f"driver_rss_200_over_10={_ratio(found['driver_rss_200_over_10'])} {versions_tag()}"
    )


def is_met(figure: str, value: float, targets: dict = TARGETS) -> bool:
    comparison, target = targets[figure]
    return value <= target if comparison == "<=" else value >= target


def larger_phases(phases: dict[str, float], most: int = 3) -> str:
    """`phases` (name -> seconds), largest first, the positive ones only, at most `most`."""
    ordered = sorted(((name, seconds) for name, seconds in phases.items() if seconds > 0.05),
                     key=lambda item: -item[1])
    return ", ".join(f"{name} {seconds:.1f} s" for name, seconds in ordered[:most]) or "none"


def holder(figure: str, result: dict) -> str:
    """Which phases hold a figure: what its slow side spends more than the side it is held against."""
    if figure == "noop_over_start":
        sides = noop_summary(result["noop"])["sides"]
        run, start = sides["dbt_run"], sides["session_start"]
        excess = {NOOP_PHASES[key]: seconds - start["phases"].get(key, 0.0)
                  for key, seconds in run["phases"].items()}
        # dbt's first catalog query (listing schemas) starts the metastore client, as B's `show
        # tables` does: that much of dbt's time is the same work on both sides.
        excess[METASTORE_SHARED] = excess.pop(NOOP_PHASES["dbt_other_s"]) - start["phases"].get("query_s", 0.0)
        if run["models"]:
            slowest = max(run["models"], key=run["models"].get)
            excess[f"{NOOP_PHASES['models_s']} (slowest {slowest} {run['models'][slowest]:.1f} s)"] = \
                excess.pop(NOOP_PHASES["models_s"])
        return ("the no-op run's phases beyond the bare start's: " + larger_phases(excess))
    if figure in ATTACHED_SIDES:
        return attached_holder(figure, result)
    if figure.startswith("recompute_over_incremental@"):
        row = next(row for row in recompute_rows(result["recompute"])
                   if size_label(row["history"]) == figure.split("@")[1])
        wall, execute = row["wall_s"]["streaming"], row["execute_s"]["streaming"]
        return (f"the streaming_table run's {wall:.1f} s: " + larger_phases(
            {"models' execution": execute, "dbt's parse, compile and hooks": wall - execute})
            + f" (table's run: {row['wall_s']['table']:.1f} s)")
    if figure == "first_run_over_table":
        first = max(result["recompute"], key=lambda measured: measured["history"])["first_run"]
        streaming, table = first["streaming"], first["table"]
        return ("the streaming_table first run's excess over table's: " + larger_phases({
            "models' execution": streaming["execute_s"] - table["execute_s"],
            "dbt's parse, compile and hooks": (streaming["wall_s"] - streaming["execute_s"])
            - (table["wall_s"] - table["execute_s"]),
        }))
    sides = overhead_summary(result["overhead"])["sides"]

    def split(side: dict) -> dict:
        named = {"Python imports": side["imports_s"], "JVM start": side["jvm_start_s"],
                 "dbt parse, compile and hooks": side.get("dbt_other_s", 0.0),
                 "processing": side["processing_s"]}
        named["process start and exit"] = side["wall_s"] - sum(named.values())
        return named

    dbt, handwritten = split(sides["dbt"]), split(sides["handwritten"])
    return "dbt's phases beyond the hand-written job's: " + larger_phases(
        {name: seconds - handwritten[name] for name, seconds in dbt.items()})


# figure -> (its slow side, the side it is held against; None: a figure of its own)
ATTACHED_SIDES = {
    "noop_attached_over_plain_start": ("noop_attached", None),
    "one_pct_attached_over_noop_attached": ("one_pct_attached", "noop_three_attached"),
    "show_attached_s": (None, None),
    "driver_rss_200_over_10": (None, None),
}


def attached_holder(figure: str, result: dict) -> str:
    attached = result["noop"]["attached"]
    slow, against = ATTACHED_SIDES[figure]
    if slow is None:
        if figure == "show_attached_s":
            return f"`dbt show`'s wall times: {', '.join(f'{s:.1f} s' for s in attached['show']['walls_s'])}"
        return f"the driver's memory after attached runs: {attached['memory']['mb']} MB"
    walls = {side: median(run["wall_s"] for run in runs) for side, runs in attached["runs"].items()}
    phases = medians(noop_phases(run, run["wall_s"]) for run in attached["runs"][slow])
    named = {NOOP_PHASES[key]: seconds for key, seconds in phases.items()}
    if against is None:
        return f"the attached no-op's {walls[slow]:.1f} s: " + larger_phases(named)
    base = medians(noop_phases(run, run["wall_s"]) for run in attached["runs"][against])
    return "the attached 1% run's phases beyond the attached no-op's: " + larger_phases(
        {NOOP_PHASES[key]: seconds - base.get(key, 0.0) for key, seconds in phases.items()})


def target_lines(result: dict) -> list[str]:
    """A line per target: met, not met and which phases hold it, or not measured."""
    return lines_per_target("run-cost", figures(result), TARGETS, lambda figure: holder(figure, result),
                            " (quick mode)" if result.get("quick") else "")


def lines_per_target(label: str, found: dict[str, float | None], targets: dict,
                     held_by: Callable[[str], str], not_measured_note: str = "") -> list[str]:
    """`bench <label>: <figure> <value> (target ...): met | NOT met; held by ... | not measured`."""
    lines = []
    for figure, value in found.items():
        comparison, target = targets[figure]
        head = f"bench {label}: {figure} {_ratio(value)} (target {comparison} {target:g}): "
        if value is None:
            lines.append(head + "not measured in this run" + not_measured_note)
        elif is_met(figure, value, targets):
            lines.append(head + "met")
        else:
            lines.append(head + "NOT met; held by " + held_by(figure))
    return lines
