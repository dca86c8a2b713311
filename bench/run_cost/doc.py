"""Section 6 of docs/BENCHMARKS.md, from the run-cost part's JSON result (bench/run_cost/measure.py)."""

from __future__ import annotations

from bench.harness.doc import NOT_RUN, run_line, section_of, seconds, table
from bench.overhead.report import overhead_section
from bench.recompute.report import recompute_section
from bench.run_cost import figures as run_cost_figures
from bench.run_cost import fixed_cost

RUN_COST_HEADING = "## 6. Run cost"


def run_cost_section_of(document_text: str) -> list[str] | None:
    """The document's run-cost section as it stands, or None when it has none."""
    return section_of(document_text, RUN_COST_HEADING)


def run_cost_section(result: dict | None) -> list[str]:
    lines = [RUN_COST_HEADING, ""]
    if result is None:
        return lines + [NOT_RUN, ""]
    noop = run_cost_figures.noop_summary(result["noop"])
    found = run_cost_figures.figures(result)
    lines += [
        "What a run costs beyond the work it has to do. " + run_line(result)
        + (f" Quick mode: {result['quick']}." if result.get("quick") else ""), "",
    ]
    lines += _figures_table(found, run_cost_figures.TARGETS, lambda figure: run_cost_figures.holder(figure, result))
    lines += ["", *_noop_lines(result, noop), *BEFORE, *_fixed_cost_lines(result)]
    measured_here = result.get("measured_here", [])
    if "recompute" in measured_here:
        lines += ["### 1% new and first run over history", ""] + recompute_section(result["recompute"])[2:]
    if "overhead" in measured_here:
        lines += ["### dbt vs hand-written", ""] + overhead_section(result["overhead"])[2:]
    if result.get("quick") and not any(result.get(name) for name in ("recompute", "overhead")):
        lines += ["Quick mode measures the fixed cost alone: the figures of sections 1 and 2 are "
                  "those sections' last run (`make bench`).", ""]
    elif len(measured_here) < 2:
        lines += [f"The other figures are from section{'s' if not measured_here else ''} "
                  + " and ".join(number for name, number in (("recompute", "1"), ("overhead", "2"))
                                 if name not in measured_here)
                  + " of the same run.", ""]
    return lines + ["```", run_cost_figures.summary_line(found), fixed_cost.summary_line(result), "```", ""]


# The no-op run before the fixed cost was cut (2026-11-24, the run docs/BENCHMARKS.md held then):
# the demo's nine streaming models then, each starting a query with nothing to do, no class-data
# archive; and the run before the second round of cuts. Kept beside each new run's table, to read
# them against each other.
BEFORE = [
    "Before the fixed cost was cut (run of 2026-11-24: all nine streaming models of the demo then, "
    "each starting its query to find nothing new; no class-data archive): A 22.1 s against B 12.1 s "
    "(noop_over_start 1.82). A's phases: Python start and imports 2.0 s, Spark session start 6.5 s, "
    "dbt parse, compile and the rest of dbt 6.4 s, models' execution 6.6 s (the first 2.7 s, the "
    "others 0.3-0.6 s each), on-run-end hooks 0.0 s, exit 0.6 s; B's `show tables` 5.1 s.", "",
    "Before Delta's jars moved onto the driver's class path and idle models stopped opening Delta's "
    "log handle (run of 2026-11-26 14:12, quiet machine, 13 models, models skipping their query "
    "already): A 12.3 s against B 6.0 s and C 9.0 s (noop_over_start 2.05, noop_over_plain_start "
    "1.36, idle_model_ms 119). A's phases: Python start and imports 1.5 s, Spark session start "
    "3.7 s, dbt parse, compile and the rest of dbt 4.3 s, models' execution 2.1 s (the first 0.8 s, "
    "the others 0.1-0.2 s each), exit 0.5 s; B's session start 3.3 s and `show tables` 2.4 s.", "",
]


def _fixed_cost_lines(result: dict) -> list[str]:
    """The fixed cost: figures against targets, the sides' walls and JVM starts, the 1% runs."""
    noop = result["noop"]
    if "plain_start" not in noop["runs"]:
        return []
    lines = ["### Fixed cost", "",
             "C: `bench/run_cost/plain_start.py`, a plain PySpark session (Delta's extension and "
             "catalog, Delta's jars on `spark.jars`, Hive support, Derby) and `show tables`; D: B "
             "with `SPARK_CLASS_DATA_SHARING=off` (the JVM without the class-data archive of "
             "`adapter/dbt_spark_streaming/jvm_options.py`, as before it). 1% new: on the same lakehouse, "
             f"{noop['one_pct']['history_rows']:,} recordings landed and run once through bronze_recordings, "
             "silver_recordings and device_counts (complete mode; not measured), then "
             f"a fresh `dbt run` of those three after {noop['one_pct']['new_rows']:,} new "
             "recordings landed (landing not timed) against a fresh one with nothing new, "
             f"alternating, {len(noop['one_pct']['runs']['noop'])} of each. CDC: `python -m bench.cdc "
             "--keys 1000000 --changed-keys 1000 --batches 3` (section 8's bench, 1,000 changes a batch).", ""]
    lines += _figures_table(fixed_cost.figures(result), fixed_cost.TARGETS,
                            lambda figure: fixed_cost.holder(figure, result))
    walls, starts = fixed_cost.side_walls(noop), fixed_cost.jvm_start_s(noop)
    names = {"dbt_run": "A: no-op `dbt run` (streaming and cdc models)",
             "session_start": "B: project session + `show tables`",
             "session_start_no_archive": "D: B without the class-data archive",
             "plain_start": "C: plain PySpark session + `show tables`",
             "one_pct:one_pct": "1% new `dbt run`", "one_pct:noop": "no-op `dbt run` (after the history)"}
    session = {"session_start": starts["after"], "session_start_no_archive": starts["before"],
               "plain_start": starts["plain"]}
    lines += ["", *table(["side", "median wall", "session start"],
                         [[names.get(side, side), seconds(wall),
                           seconds(session[side]) if session.get(side) is not None else "-"]
                          for side, wall in walls.items()]), ""]
    return lines


def _noop_lines(result: dict, noop: dict) -> list[str]:
    """The no-op `dbt run` against a bare session start: what they are, their phases, every run."""
    run, start = noop["sides"]["dbt_run"], noop["sides"]["session_start"]
    lines = [
        "### No-op `dbt run` vs a bare session start", "",
        "A: the demo's `dbt run --select config.materialized:streaming_table "
        "config.materialized:cdc_table` on a lakehouse where one `dbt build` of the seed "
        "and models already took everything landed, and one `dbt run` after it ran what a first run "
        "leaves for the next (a stateful model's batch past its input's initial snapshot), so nothing "
        "is new (`bench/run_cost/noop_run.py`); B: "
        "`dbt_spark_streaming.session.get_or_create_session()` and `show tables` on the same lakehouse "
        f"(`bench/run_cost/session_start.py`). Fresh processes, A B A B ... ({result['noop']['pairs']} of "
        "each), wall timed from outside; **noop_over_start = "
        f"{noop['noop_over_start']:.2f}** (median wall A / median wall B). Phases, median of each "
        "(from the parent starting the process; a model's time is dbt's execute timing, the "
        "session start `dbt_spark_streaming.session.startup_seconds`; the remainder is what the "
        "process took after its last step, mostly stopping the JVM):", "",
    ]

    def cell(side: dict, key: str) -> str:
        return seconds(side["phases"][key]) if key in side["phases"] else "-"

    rows = []
    for key in run_cost_figures.NOOP_PHASES:
        rows.append([run_cost_figures.NOOP_PHASES[key] + (" (all)" if key == "models_s" else ""),
                     cell(run, key), cell(start, key)])
        if key == "models_s":
            rows += [[f"- {model}", seconds(value), "-"] for model, value in run["models"].items()]
    rows.append(["**wall**", f"**{seconds(run['wall_s'])}**", f"**{seconds(start['wall_s'])}**"])
    lines += table(["phase", "A: no-op `dbt run`", "B: session start + `show tables`"], rows)
    return lines + ["", "Every run: " + ", ".join(
        f"{index + 1}: A {seconds(a['wall_s'])}, B {seconds(b['wall_s'])}"
        for index, (a, b) in enumerate(zip(result["noop"]["runs"]["dbt_run"],
                                           result["noop"]["runs"]["session_start"])))
        + f". Setup (not measured): {seconds(result['noop']['setup_s'])}.", ""]


def _figures_table(found: dict, targets: dict, held_by) -> list[str]:
    """Each figure against its target: met, not met and what holds it, or not measured."""
    return table(
        ["figure", "value", "target", "met"],
        [[f"`{figure}`", "-" if value is None else f"{value:.2f}", f"{targets[figure][0]} {targets[figure][1]:g}",
          "not measured" if value is None else "yes" if run_cost_figures.is_met(figure, value, targets)
          else "no: " + held_by(figure)]
         for figure, value in found.items()],
    )
