"""`make bench`'s run-cost part: its figures, targets, summary line and doc section, from made-up
results (no Spark)."""

from __future__ import annotations

import pyspark

from bench.harness.machine import versions_tag
from bench.harness.doc import replace_section
from bench.run_cost.doc import run_cost_section, run_cost_section_of
from bench.run_cost import fixed_cost
from bench.run_cost.figures import figures, noop_summary, summary_line, target_lines


def noop_run(wall_s: float, bronze_s: float) -> dict:
    return {"wall_s": wall_s, "imports_s": 3.0, "session_s": 10.0, "dbt_s": wall_s - 5.0,
            "models_s": {"bronze": bronze_s, "gold": 1.0}, "hooks_s": 0.5, "inside_s": wall_s - 2.0}


def session_run(wall_s: float) -> dict:
    return {"wall_s": wall_s, "imports_s": 1.0, "session_s": 10.0, "query_s": 2.0, "inside_s": wall_s - 2.0}


def variant(wall_s: float, execute_s: float) -> dict:
    return {"wall_s": wall_s, "execute_s": execute_s}


def recompute(history: int, streaming_s: float, table_s: float) -> dict:
    return {
        "history": history, "new_rows_per_round": history // 100, "rounds": 1,
        "first_run": {"streaming": variant(30.0, 28.0), "table": variant(10.0, 9.0),
                      "incremental": variant(9.0, 8.0)},
        "runs": {"streaming": [variant(streaming_s, streaming_s - 1)], "table": [variant(table_s, table_s - 1)],
                 "incremental": [variant(12.0, 11.0)]},
        "gold_rows": 10, "gold_differences": [],
    }


def overhead_run(wall_s: float, processing_s: float, dbt: bool) -> dict:
    run = {"wall_s": wall_s, "imports_s": 1.0, "jvm_start_s": 8.0, "processing_s": processing_s,
           "gold_rows": [["1"]], "streams": {}}
    if dbt:
        run["dbt_s"] = processing_s + 20.0
    return run


RESULT = {
    "started_at": "2026-11-23 20:00", "command": "python -m bench --parts run_cost --quick",
    "quick": "1% new at H=1000000 only", "load_start": "2.0/2.0/2.0", "load_end": "2.1/2.0/2.0",
    "duration_min": 9.5, "measured_here": ["recompute", "overhead"],
    "noop": {"pairs": 3, "setup_s": 90.0, "runs": {
        "dbt_run": [noop_run(40.0, 20.0), noop_run(44.0, 22.0), noop_run(38.0, 18.0)],
        "session_start": [session_run(15.0), session_run(16.0), session_run(20.0)],
    }},
    "recompute": [recompute(1_000_000, streaming_s=5.0, table_s=10.0)],
    "overhead": {"rows": 1_000_000, "files": 10, "pairs": 1, "data_s": 5.0, "runs": {
        "dbt": [overhead_run(60.0, 30.0, dbt=True)], "handwritten": [overhead_run(50.0, 38.0, dbt=False)]}},
}


def test_figures_and_the_summary_line_with_a_dash_for_what_was_not_measured():
    found = figures(RESULT)
    assert found["noop_over_start"] == 40.0 / 16.0
    assert found["recompute_over_incremental@1M"] == 2.0
    assert found["recompute_over_incremental@10M"] is None
    assert found["first_run_over_table"] == 3.0
    assert found["dbt_over_handwritten"] == 1.2
    assert summary_line(found) == (
        "bench run-cost: noop_over_start=2.50 recompute_over_incremental=2.00@1M -@10M "
        "first_run_over_table=3.00 dbt_over_handwritten=1.20 noop_attached_over_plain_start=- "
        "one_pct_attached_over_noop_attached=- show_attached_s=- driver_rss_200_over_10=- "
        + versions_tag()  # spark=<pyspark's version> java=<the Java sessions start on>
    )
    assert versions_tag().startswith(f"spark={pyspark.__version__} java=")


def test_the_noop_phases_add_up_to_the_wall_time():
    run = noop_summary(RESULT["noop"])["sides"]["dbt_run"]
    # the median run (40 s): imports 3 + dbt 35 (session 10, models 21, hooks 0.5, the rest) + exit 2
    assert run["phases"]["dbt_other_s"] == 35.0 - 10.0 - 21.0 - 0.5
    assert run["phases"]["exit_s"] == 2.0
    assert run["models"] == {"bronze": 20.0, "gold": 1.0}


def test_each_target_met_or_not_and_which_phase_holds_it():
    lines = target_lines(RESULT)
    assert len(lines) == 9
    noop, at_1m, at_10m, first_run, overhead = lines[:5]
    assert all(line.endswith("not measured in this run (quick mode)") for line in lines[5:])
    assert "NOT met" in noop and "models' execution (slowest bronze 20.0 s) 21.0 s" in noop
    # dbt's own 3.5 s hold the metastore client's start, which the bare side's `show tables` took (2 s)
    assert "rest of dbt, beyond the metastore client's start (B's `show tables`) that its first " \
           "catalog query also pays 1.5 s" in noop
    assert at_1m.endswith("met") and "NOT" not in at_1m
    assert at_10m.endswith("not measured in this run (quick mode)")
    assert "NOT met" in first_run and "models' execution 19.0 s" in first_run
    # dbt: 60 s wall = imports 1 + JVM 8 + dbt's own 20 + processing 30 + 1; hand-written 50 = 1 + 8 + 38 + 3
    assert "NOT met" in overhead and overhead.endswith("dbt parse, compile and hooks 20.0 s")


def test_the_doc_section_replaces_only_itself():
    section = run_cost_section(RESULT)
    assert section[0] == "## 6. Run cost"
    assert "| - bronze | 20.0 s | - |" in section
    assert section[-4].startswith("bench run-cost: noop_over_start=2.50 ")
    assert section[-3].startswith("bench fixed-cost: noop_over_start=-")
    doc = "\n".join(["# Benchmarks", "", "## 5. Modes", "", "| keys |", "",
                     "```", "bench: recompute_over_incremental=2.22 at H=10000000", "```", ""])
    with_section = replace_section(doc, section)
    assert with_section.index("## 5. Modes") < with_section.index("## 6. Run cost") < with_section.index(
        "bench: recompute")
    assert run_cost_section_of(with_section) == section
    newer = run_cost_section({**RESULT, "started_at": "2026-11-24 08:00"})
    replaced = replace_section(with_section, newer)
    assert replaced == replace_section(doc, newer)
    assert "2026-11-23 20:00" not in replaced and "| keys |" in replaced


def with_fixed_cost() -> dict:
    def started(wall_s: float, session_s: float) -> dict:
        return {**session_run(wall_s), "session_s": session_s}

    noop = {**RESULT["noop"], "runs": {
        **RESULT["noop"]["runs"],
        "session_start_no_archive": [started(19.0, 6.0), started(18.0, 5.0), started(21.0, 7.0)],
        "plain_start": [started(20.0, 4.0), started(25.0, 5.0), started(22.0, 6.0)],
    }, "one_pct": {"history_rows": 1_000_000, "new_rows": 10_000, "setup_s": 60.0, "runs": {
        "one_pct": [{**noop_run(51.0, 25.0), "land_s": 1.0}, {**noop_run(61.0, 30.0), "land_s": 1.0}],
        "noop": [noop_run(40.0, 1.0), noop_run(40.0, 1.0)],
    }}}
    cdc = {"rows": [{"stored_as": "scd1", "median_s": 1.2, "phases_median_s": {"merge": 0.6}},
                    {"stored_as": "scd2", "median_s": 3.0, "phases_median_s": {"merge": 1.5, "source": 1.0,
                                                                             "merge_jobs": 9.0}}]}
    return {**RESULT, "noop": noop, "cdc_1k": cdc}


def test_the_fixed_cost_figures_line_and_what_holds_each_missed_target():
    result = with_fixed_cost()
    found = fixed_cost.figures(result)
    assert found["noop_over_start"] == 40.0 / 16.0
    assert found["noop_over_plain_start"] == 40.0 / 22.0
    assert found["idle_model_ms"] == 10_500  # per run the median of bronze and gold: 10.5, 11.5, 9.5 s
    assert found["one_pct_over_noop"] == 55.0 / 40.0  # landing not counted
    assert (found["cdc_1k_scd1_s"], found["cdc_1k_scd2_s"]) == (1.2, 3.0)
    assert fixed_cost.summary_line(result) == (
        "bench fixed-cost: noop_over_start=2.50 noop_over_plain_start=1.82 idle_model_ms=10500 "
        "jvm_start_s=6.0->10.0 one_pct_over_noop=1.38 cdc_1k_scd1_s=1.20 cdc_1k_scd2_s=3.00"
    )
    lines = {line.split()[2]: line for line in fixed_cost.target_lines(result)}
    assert lines["cdc_1k_scd1_s"].endswith("met") and "NOT" not in lines["cdc_1k_scd1_s"]
    assert lines["cdc_1k_scd2_s"].endswith("held by largest phases per batch: merge 1.50 s, source 1.00 s")
    assert "slowest idle models: bronze 20000 ms, gold 1000 ms" in lines["idle_model_ms"]
    assert "models_s 28.5 s vs 2.0 s" in lines["one_pct_over_noop"]
    section = run_cost_section(result)
    assert "### Fixed cost" in section and "| C: plain PySpark session + `show tables` | 22.0 s | 5.0 s |" in section


def test_the_attached_figures_and_what_holds_a_missed_one():
    def attached(wall_s: float, session_s: float, land_s: float = 0.0, bronze_s: float = 1.0) -> dict:
        run = {**noop_run(wall_s, bronze_s), "session_s": session_s, "land_s": land_s}
        return {**run, "dbt_s": run["dbt_s"] - land_s}

    result = with_fixed_cost()
    result["noop"]["attached"] = {
        "driver_start_s": 20.0,
        "runs": {"noop_attached": [attached(9.0, 0.2), attached(10.0, 0.3), attached(12.0, 0.2)],
                 "one_pct_attached": [attached(16.0, 0.2, 1.0, 6.0), attached(17.0, 0.2, 1.0, 7.0)],
                 "noop_three_attached": [attached(10.0, 0.2), attached(10.0, 0.2)]},
        "memory": {"runs": 200, "mb": {"10": 1000.0, "200": 1100.0}, "median_run_s": 5.0},
        "show": {"walls_s": [4.0, 4.5, 6.0], "show_attached_s": 4.5},
    }
    found = figures(result)
    assert found["noop_attached_over_plain_start"] == 10.0 / 22.0
    assert found["one_pct_attached_over_noop_attached"] == 15.5 / 10.0  # landing not counted
    assert (found["show_attached_s"], found["driver_rss_200_over_10"]) == (4.5, 1.1)
    lines = {line.split()[2]: line for line in target_lines(result)}
    assert lines["noop_attached_over_plain_start"].endswith("met")
    assert "NOT met; held by the attached 1% run's phases beyond the attached no-op's: " \
           "models' execution 5.5 s" in lines["one_pct_attached_over_noop_attached"]
    assert lines["show_attached_s"].endswith("met") and lines["driver_rss_200_over_10"].endswith("met")
