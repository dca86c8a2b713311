"""docs/BENCHMARKS.md and the console table: every figure from one `make bench` run's results."""

from __future__ import annotations

from bench import run_cost_figures
from bench.figures import (
    PHASES, hop_summary, latency_summary, overhead_summary, recompute_rows, throughput_rows,
)

NOT_RUN = "_Not run in this benchmark run (left out with `--parts`)._"


def _table(header: list[str], rows: list[list]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
        *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows),
    ]


def _s(seconds: float) -> str:
    return f"{seconds:.1f} s"


def machine_section(run: dict) -> list[str]:
    machine = run["machine"]
    packages = ", ".join(f"{name} {version}" for name, version in machine["packages"].items())
    return [
        "## Machine and versions", "",
        f"- Run: {run['started_at']} (UTC), {run['duration_min']:.1f} min in all, "
        f"with `{run['command']}`",
        f"- CPU: {machine['cpu']}, {machine['cores']} cores; memory {machine['memory_gb']} GB; "
        f"{machine['os']}",
        f"- Load average (1/5/15 min) at start {run['load_start']}, at end {run['load_end']}",
        f"- Python {machine['python']}; Java: {machine['java']}", f"- {packages}",
        f"- Spark: {machine['spark']}", "",
    ]


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
    lines += _table(
        ["history H", "new rows", "streaming_table", "table (recompute)", "incremental (merge)",
         "recompute / streaming", "merge / streaming", "gold tables agree"],
        [[f"{row['history']:,}", f"{row['new_rows']:,}", _s(row["wall_s"]["streaming"]),
          _s(row["wall_s"]["table"]), _s(row["wall_s"]["incremental"]),
          f"{row['recompute_over_incremental']:.2f}", f"{row['merge_over_incremental']:.2f}",
          "yes" if not row["gold_differences"] else "NO: " + "; ".join(row["gold_differences"])]
         for row in rows],
    )
    lines += ["", "Models' own execution time (dbt's execute phase, median) and the first run "
              "over the whole history:", ""]
    lines += _table(
        ["history H", "streaming_table", "table", "incremental", "first run: streaming_table",
         "first run: table", "first run: incremental"],
        [[f"{row['history']:,}", *(_s(row["execute_s"][v]) for v in ("streaming", "table", "incremental")),
          *(_s(row["first_run_s"][v]) for v in ("streaming", "table", "incremental"))]
         for row in rows],
    )
    return lines + [""]


def overhead_section(result: dict | None) -> list[str]:
    lines = ["## 2. Overhead: `dbt build` vs a hand-written PySpark job", ""]
    if result is None:
        return lines + [NOT_RUN, ""]
    summary = overhead_summary(result)
    lines += [
        f"The demo's recordings path (devices seed; bronze_recordings, silver_recordings, "
        f"quarantined_recordings, gold device_counts and ward_heart_rates) over {result['rows']:,} "
        f"generated recordings in {result['files']} JSON files: A is `dbt build` of those nodes "
        "(`bench/dbt_pipeline_run.py`), B the same five streaming writes written by hand in "
        "PySpark (`bench/handwritten_pipeline.py`, same session settings). Each run a fresh process "
        f"on an empty lakehouse, A B A B ... ({result['pairs']} of each); dbt parsed the project "
        "once before, as for a user's second run. Wall = process start to exit, timed from "
        "outside. Medians:", "",
    ]
    sides = summary["sides"]
    lines += _table(
        ["side", "wall", "Python imports", "JVM start", "dbt parse/compile/hooks", "processing"],
        [["A: dbt build", _s(sides["dbt"]["wall_s"]), _s(sides["dbt"]["imports_s"]),
          _s(sides["dbt"]["jvm_start_s"]), _s(sides["dbt"]["dbt_other_s"]),
          _s(sides["dbt"]["processing_s"])],
         ["B: hand-written", _s(sides["handwritten"]["wall_s"]), _s(sides["handwritten"]["imports_s"]),
          _s(sides["handwritten"]["jvm_start_s"]), "-", _s(sides["handwritten"]["processing_s"])]],
    )
    lines += ["", f"**dbt_over_handwritten = {summary['dbt_over_handwritten']:.2f}** (median wall A / "
              f"median wall B). Both sides' gold tables identical in every run: "
              f"{'yes' if summary['same_gold'] else 'NO'}.", "", "Every run:", ""]
    lines += _table(
        ["run", "side", "wall", "JVM start", "processing"],
        [[index + 1, side, _s(run["wall_s"]), _s(run["jvm_start_s"]), _s(run["processing_s"])]
         for index in range(result["pairs"]) for side, runs in result["runs"].items()
         for run in [runs[index]]],
    )
    return lines + [""]


LATENCY_HEADING = "## 3. Latency, always on"


def latency_section(result: dict | None, all_models: dict | None = None, run: dict | None = None) -> list[str]:
    lines = [LATENCY_HEADING, ""]
    if result is None:
        return lines + [NOT_RUN, ""]
    summary = latency_summary(result)
    if run:
        lines += [f"Run: {run['started_at']} (UTC), {run['duration_min']:.1f} min, with "
                  f"`{run['command']}`; load average at start {run['load_start']}, at end "
                  f"{run['load_end']}.", ""]
    lines += [
        f"`python -m python_runners service start --trigger \"{result['trigger']}\"` over "
        f"{', '.join(result['models'])} (the demo's path from landing to one gold table). One "
        f"small JSON file landed every {result['interval_s']} s, {summary['landings']} in all; "
        "latency = from the file's rename into the landing folder to the first commit of "
        "gold.device_counts that holds it (read from the Delta log's file statistics, "
        "`bench/gold_commits.py`).", "",
    ]
    rows = [["three hops", summary["landings"], f"{summary['p50_ms']:.0f} ms", f"{summary['p95_ms']:.0f} ms",
             f"{summary['min_ms']:.0f} ms", f"{summary['max_ms']:.0f} ms", result["gold_commits"]]]
    if all_models:
        every = latency_summary(all_models)
        rows.append(["all nine models serving", every["landings"], f"{every['p50_ms']:.0f} ms",
                     f"{every['p95_ms']:.0f} ms", f"{every['min_ms']:.0f} ms", f"{every['max_ms']:.0f} ms",
                     all_models["gold_commits"]])
    lines += _table(["service", "landings", "p50", "p95", "min", "max", "gold commits"], rows)
    if result.get("hops"):
        lines += ["", "Per hop (three hops): from the row being visible upstream (landed, or "
                  "committed to the table before) to the commit of this model's table that holds "
                  "it; split into the wait before the micro-batch that took it started and that "
                  "batch's own duration (its progress `triggerExecution`). Medians over the "
                  "landings, and the hop's p95:", ""]
        lines += _table(["hop", "p50", "p95", "wait p50", "batch p50"],
                        [[row["model"], f"{row['hop_p50']:.0f} ms", f"{row['hop_p95']:.0f} ms",
                          f"{row['wait_p50']:.0f} ms", f"{row['batch_p50']:.0f} ms"]
                         for row in hop_summary(result)])
        lines += ["", "Each query's micro-batches that read rows, median ms per phase of Spark's "
                  "progress `durationMs` (addBatch is the write: Delta's commit, and for "
                  "device_counts the state store and the complete rewrite):", ""]
        lines += _table(["query", "batches", *PHASES],
                        [[query, result["batches"][query],
                          *(f"{phases.get(phase, 0):.0f}" for phase in PHASES)]
                         for query, phases in result["phases"].items()])
    if result.get("own_time"):
        lines += ["", "The service's own code over the whole run (`make status` shows the same): " + ", ".join(
            f"{activity} {figures['ms'] / 1000:.1f} s in {figures['calls']} calls"
            for activity, figures in result["own_time"].items()) + "."]
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
    lines += _table(
        ["layer", "model", "rows", "batches", "rows/s, dbt", "rows/s, hand-written"],
        [[row["layer"], row["model"], f"{row['rows']:,}", row["dbt_batches"],
          f"{row['dbt']:,.0f}" if row["dbt"] else "-",
          f"{row['handwritten']:,.0f}" if row["handwritten"] else "-"]
         for row in throughput_rows(result)],
    )
    return lines + [""]


def modes_section(result: dict | list[dict] | None, run: dict | None = None) -> list[str]:
    lines = ["## 5. Output mode update vs complete", ""]
    if result is None:
        return lines + [NOT_RUN, ""]
    rows = result["rows"] if isinstance(result, dict) else result  # a list: before batch shapes
    if run:
        lines += [f"Run: {run['started_at']} (UTC), with `{run['command']}`.", ""]
    lines += [
        "`bench/update_vs_complete.py` (also `make bench-modes`): an aggregate after history "
        "batches holding every key; each measured batch touches 1% of the keys, at random "
        "(shape random) or in the latest time windows (shape windows). Time per micro-batch "
        "(progress durationMs.triggerExecution), median:", "",
    ]
    lines += _table(
        ["shape", "keys", "mode", "batches", "median ms", "max ms", "rows written/batch",
         "rows in files/batch", "files touched/batch"],
        [[row.get("shape", "random"), f"{row['keys']:,}", row["mode"], row["batches"],
          f"{row['median_batch_ms']:.0f}", row["max_batch_ms"], f"{row['rows_written_per_batch']:,.0f}",
          f"{row['rows_in_files_per_batch']:,.0f}",
          f"{row['files_touched_per_batch']:.0f} of {row['table_files']}" if "table_files" in row else "-"]
         for row in rows],
    )
    if isinstance(result, dict):
        figures = [f"`{name}` = {value:.2f}" for name, value in result.items() if name != "rows"]
        lines += ["", "update_over_complete (complete's median ms / update's): " + ", ".join(figures)]
    return lines + [""]


RUN_COST_HEADING = "## 6. Run cost"


def run_cost_section(result: dict | None) -> list[str]:
    lines = [RUN_COST_HEADING, ""]
    if result is None:
        return lines + [NOT_RUN, ""]
    noop = run_cost_figures.noop_summary(result["noop"])
    found = run_cost_figures.figures(result)
    lines += [
        f"What a run costs beyond the work it has to do. Run: {result['started_at']} (UTC), "
        f"{result['duration_min']:.1f} min, with `{result['command']}`; load average at start "
        f"{result['load_start']}, at end {result['load_end']}."
        + (f" Quick mode: {result['quick']}." if result.get("quick") else ""), "",
    ]
    lines += _table(
        ["figure", "value", "target", "met"],
        [[f"`{figure}`", "-" if value is None else f"{value:.2f}", f"{target[0]} {target[1]:g}",
          "not measured" if value is None else "yes" if run_cost_figures.is_met(figure, value)
          else "no: " + run_cost_figures.holder(figure, result)]
         for figure, value in found.items() for target in [run_cost_figures.TARGETS[figure]]],
    )
    run, start = noop["sides"]["dbt_run"], noop["sides"]["session_start"]
    lines += [
        "", "### No-op `dbt run` vs a bare session start", "",
        "A: the demo's `dbt run` (all nine models) on a lakehouse where one `dbt build` of the seed "
        "and models already took everything landed, and one `dbt run` after it ran what a first run "
        "leaves for the next (a stateful model's batch past its input's initial snapshot), so nothing "
        "is new (`bench/noop_run.py`); B: "
        "`python_runners.runtime.session.get_or_create_session()` and `show tables` on the same lakehouse "
        f"(`bench/session_start.py`). Fresh processes, A B A B ... ({result['noop']['pairs']} of "
        "each), wall timed from outside; **noop_over_start = "
        f"{noop['noop_over_start']:.2f}** (median wall A / median wall B). Phases, median of each "
        "(from the parent starting the process; a model's time is dbt's execute timing, the "
        "session start `python_runners.runtime.session.startup_seconds`; the remainder is what the "
        "process took after its last step, mostly stopping the JVM):", "",
    ]
    def cell(side: dict, key: str) -> str:
        return _s(side["phases"][key]) if key in side["phases"] else "-"

    rows = []
    for key in run_cost_figures.NOOP_PHASES:
        rows.append([run_cost_figures.NOOP_PHASES[key] + (" (all)" if key == "models_s" else ""),
                     cell(run, key), cell(start, key)])
        if key == "models_s":
            rows += [[f"- {model}", _s(seconds), "-"] for model, seconds in run["models"].items()]
    rows.append(["**wall**", f"**{_s(run['wall_s'])}**", f"**{_s(start['wall_s'])}**"])
    lines += _table(["phase", "A: no-op `dbt run`", "B: session start + `show tables`"], rows)
    lines += ["", "Every run: " + ", ".join(
        f"{index + 1}: A {_s(a['wall_s'])}, B {_s(b['wall_s'])}"
        for index, (a, b) in enumerate(zip(result["noop"]["runs"]["dbt_run"],
                                           result["noop"]["runs"]["session_start"])))
        + f". Setup (not measured): {_s(result['noop']['setup_s'])}.", ""]
    measured_here = result.get("measured_here", [])
    if "recompute" in measured_here:
        lines += ["### 1% new and first run over history", ""] + recompute_section(result["recompute"])[2:]
    if "overhead" in measured_here:
        lines += ["### dbt vs hand-written", ""] + overhead_section(result["overhead"])[2:]
    if len(measured_here) < 2:
        lines += [f"The other figures are from section{'s' if not measured_here else ''} "
                  + " and ".join(number for name, number in (("recompute", "1"), ("overhead", "2"))
                                 if name not in measured_here)
                  + " of the same run.", ""]
    return lines + ["```", run_cost_figures.summary_line(found), "```", ""]


CDC_HEADING = "## 8. CDC apply: a cdc_table's MERGE per batch"


def _plural(count: float, noun: str) -> str:
    return f"{count:,.0f} {noun}" + ("" if count == 1 else "s")


def cdc_section(result: dict | None) -> list[str]:
    lines = [CDC_HEADING, ""]
    if result is None:
        return lines + [NOT_RUN, ""]
    rows = result["rows"]
    feed = rows[0]["feed"]
    kinds = ", ".join(f"{feed[kind]} {label}" for kind, label in (
        ("update", "updates"), ("update_twice", "keys updated twice"), ("delete", "deletes"),
        ("insert", "new keys"), ("late", "late changes (older than the key's row)"),
        ("repeat", "repeats of the batch before"))) + f", at {rows[0]['keys']:,} keys"
    lines += [
        f"Run: {result['started_at']} (UTC), {result['duration_min']:.1f} min, with `{result['command']}`; "
        f"load average at start {result['load_start']}, at end {result['load_end']}; code measured: "
        f"{result.get('code', 'not recorded')}.", "",
        "`bench/cdc_apply.py` (also `make bench-cdc`): a cdc_table (keys `key`, sequence_by `lsn`, "
        "deletes `op = 'D'`) stored as SCD1 and as SCD2, each table and its tombstones created as the "
        "CDC path creates them and loaded in bulk with one current row per key in "
        f"{_plural(result['files'], 'file')} (not measured); then {result['measured_batches']} "
        f"batches after a warm-up, each changing {result['changed_keys']} of the keys ({kinds}), through the project's streaming write and its foreachBatch "
        "function, one availableNow query per batch. Time per micro-batch (progress "
        "durationMs.triggerExecution); rows in files = rows in the data files the MERGE wrote, "
        "unchanged ones copied along; rows read = rows the batch's Spark jobs read from data files, "
        "and how many times the table's size that is:", "",
    ]
    lines += _table(
        ["keys", "stored_as", "batches", "median s/batch", "max s/batch", "rows per batch",
         "rows written/batch", "rows in files/batch", "files touched/batch", "rows read/batch"],
        [[f"{row['keys']:,}", row["stored_as"], row["batches"], f"{row['median_s']:.2f}",
          f"{row['max_s']:.2f}", f"{row['rows_per_batch']:,}", f"{row['rows_written_per_batch']:,.0f}",
          f"{row['rows_in_files_per_batch']:,.0f}",
          f"{row['files_touched_per_batch']:.0f} of {row['table_files']}",
          "-" if row["rows_read_per_batch"] is None
          else f"{row['rows_read_per_batch']:,.0f} ({row['rows_read_per_batch'] / row['keys']:.1f}x)"]
         for row in rows],
    )
    lines += [
        "", "Where a batch's time goes: median seconds, and the Spark jobs each phase started "
        "(`bench/cdc_phases.py`, timed inside the same foreachBatch calls). change_rows = the batch "
        "read and checkpointed; source = what the MERGE applies (SCD1: the latest change per key "
        "against the tombstones; SCD2: the touched keys' history worked out again from their "
        "versions in the table and compared with them); MERGE = the table's, with Delta's own scan "
        "and rewrite times from its commit; tombstones = remembering the batch's deletes in the "
        "tombstones table (remember_deletes); other = the rest of "
        "foreachBatch; Spark = the micro-batch outside foreachBatch:", "",
    ]

    def phase(row: dict, name: str) -> str:
        phases = row["phases_median_s"]
        jobs = phases.get(f"{name}_jobs")
        return f"{phases[name]:.2f}" + ("" if jobs is None else f" ({_plural(jobs, 'job')})")

    lines += _table(
        ["keys", "stored_as", "change_rows", "source", "MERGE", "MERGE scan / rewrite (Delta)",
         "tombstones", "other", "Spark", "bulk load (not measured)"],
        [[f"{row['keys']:,}", row["stored_as"], *(phase(row, name) for name in ("change_rows", "source", "merge")),
          f"{row['merge_median']['scanTimeMs'] / 1000:.2f} / {row['merge_median']['rewriteTimeMs'] / 1000:.2f}"
          if row["merge_median"] else "-",
          *(phase(row, name) for name in ("tombstones", "other")),
          f"{row['spark_median_s']:.2f}", f"{row['load_s']:.1f}"]
         for row in rows],
    )
    lines += ["", "The tombstones' commits over the measured batches: " + "; ".join(
        f"{row['keys']:,} {row['stored_as']}: " + ", ".join(
            f"{count} {operation}" for operation, count in row.get("tombstones_commits", {}).items())
        + (f" (MERGE median: Delta's execution {row['tombstones_merge_median']['executionTimeMs'] / 1000:.2f} s, "
           f"{_plural(row['tombstones_merge_median']['numTargetFilesRemoved'], 'file')} rewritten)"
           if row["tombstones_merge_median"] else "")
        for row in rows) + "."]
    lines += ["", *_cdc_reading(rows)]
    checked = all(not check["problems"] for check in result["checks"])
    lines += ["", "After the last batch both tables hold what the feed says (rows, current rows, sum of "
              "the current rows' lsn, no version ending before it starts): " + ("yes" if checked else "NO"), ""]
    return lines + ["```", result["summary"], "```", ""]


def _cdc_reading(rows: list[dict]) -> list[str]:
    """What the largest size's figures say, in a sentence per stored_as."""
    largest = max(row["keys"] for row in rows)
    said = []
    for row in (row for row in rows if row["keys"] == largest and row["merge_median"]):
        phases, merge = row["phases_median_s"], row["merge_median"]
        held = max(("change_rows", "source", "merge", "tombstones"), key=lambda name: phases[name])
        every_file = row["files_touched_per_batch"] >= row["table_files"]
        said.append(
            f"- At {largest:,} keys, {row['stored_as']}: of {phases['foreach_batch']:.2f} s in foreachBatch the "
            f"largest phase is {held} ({phases[held]:.2f} s); the table's MERGE rewrote "
            f"{row['rows_in_files_per_batch']:,.0f} rows to change {row['rows_written_per_batch']:,.0f} "
            f"({row['files_touched_per_batch']:.0f} of {row['table_files']} files"
            + (": keys changed at random fall in every file" if every_file else "") + f"), Delta's rewrite {merge['rewriteTimeMs'] / 1000:.2f} s; the batch read "
            + ("-" if row["rows_read_per_batch"] is None else f"{row['rows_read_per_batch'] / row['keys']:.1f}")
            + " times the table's rows.")
    return said


EXPECTATIONS_HEADING = "## 9. Expectations: five rules on a 1M-row batch"
_RUNS_HEADER = ["when (UTC)", "code", "none s", "five s", "five / none", "five without quarantine s",
                "without quarantine / none", "JVM CPU five / none", "load at start, end"]


def expectations_section(result: dict | None, previous: list[str] | None = None) -> list[str]:
    """The benchmark's figures; the runs listed in `previous` (the section as it stood) stay
    listed, this one added last, so a change's before and after stay side by side."""
    lines = [EXPECTATIONS_HEADING, ""]
    if result is None:
        return lines + [NOT_RUN, ""]
    variants = {row["variant"]: row for row in result["variants"]}
    none = variants["none"]
    lines += [
        f"Run: {result['started_at']} (UTC), {result['duration_min']:.1f} min, with `{result['command']}`; "
        f"load average at start {result['load_start']}, at end {result['load_end']}; code measured: "
        f"{result['code']}.", "",
        "`bench/expectations.py` (also `make bench-expectations`): a Delta table of "
        f"{result['rows']:,} recordings (id, device_id, heartbeat, time, ward, note; written once, not "
        "measured) streamed whole, one micro-batch, through the project's StreamingWrite (append, "
        "availableNow) into a new table and checkpoint per variant and round. none: no expectations; "
        "five: 2 warn (1% and 0.5% of the rows fail them), 1 drop (1%), 1 fail (no row fails it), 1 "
        "quarantine (1%); five without quarantine: the same rules with the quarantine rule a drop, so "
        "the same rows reach the table and the difference to five is the quarantine's own cost. "
        f"{result['rounds']} rounds after {result.get('warm_up_rounds', 1)} of warm-up, the variants in "
        "turn, rotated each round. Time per micro-batch (progress durationMs.triggerExecution), the "
        "JVM's CPU seconds over the query (all its threads: tasks, driver, garbage collector, "
        "compiler; on a shared machine it moves far less than the wall time), and where the time "
        "goes, median seconds (`bench/foreach_batch_clock.py`, timed inside the same foreachBatch "
        "calls): the first Delta write of the batch, which also reads it and applies the rules; the "
        "second (the quarantine split's other table); the rest of foreachBatch; Spark = the "
        "micro-batch outside foreachBatch:", "",
    ]

    def jobs(row: dict, phase: str) -> str:
        count = row["jobs_median"][phase]
        return "" if count != count else f" ({_plural(count, 'job')})"

    def cpu(row: dict) -> str:
        if row.get("cpu_median_s") is None:
            return "-"
        return f"{row['cpu_median_s']:.2f} ({row['cpu_median_s'] / none['cpu_median_s']:.2f})"

    lines += _table(
        ["variant", "rules", "batches", "median s/batch", "min, max s", "/ none", "JVM CPU s (/ none)",
         "first write", "second write", "other", "Spark"],
        [[row["variant"].replace("_", " "), ", ".join(row["rules"]) or "-", len(row["batch_s"]),
          f"{row['median_s']:.2f}", f"{row['min_s']:.2f}, {row['max_s']:.2f}",
          f"{row['median_s'] / none['median_s']:.2f}", cpu(row),
          f"{row['phases_median_s']['first_write']:.2f} ({row['first_write']}){jobs(row, 'first_write')}",
          "-" if not row["phases_median_s"]["second_write"] else
          f"{row['phases_median_s']['second_write']:.2f}{jobs(row, 'second_write')}",
          f"{row['phases_median_s']['other']:.2f}", f"{row['phases_median_s']['spark']:.2f}"]
         for row in result["variants"]],
    )
    def verdict(ratio: float) -> str:
        return f"**{'met' if ratio <= result['target'] else 'NOT met'}** ({ratio:.2f}x)"

    lines += [
        "", f"Target (issue 22), five expectations within {result['target']}x of none: "
        f"{verdict(result['ratio_without_quarantine'])} by five that warn, drop or fail rows; "
        f"{verdict(result['ratio'])} when one of the five is a quarantine. A quarantine writes a "
        "second Delta table every batch, and keeps the batch's rows between the two writes so that "
        "the rules and the query above them run once: the second write and the extra pass over the "
        "kept rows are the difference (first write + second write against the first write without "
        "a quarantine). A Delta commit has a fixed cost of its own on this machine whatever its "
        "size, so a quarantine's share is smaller on larger batches and on batches with no "
        "quarantined row nothing is written to it. ",
        "After every batch its table, its quarantine and its counts were checked against the data "
        "(rows and sum of ids in each table, the rules each quarantined row failed, every count in "
        "the progress's observedMetrics): " + ("yes" if result["checked"] else "NO") + ".", "",
        "Runs, oldest first (each row one run of the benchmark):", "",
    ]
    cpu_ratio = "-" if result.get("cpu_ratio") is None else f"{result['cpu_ratio']:.2f}"
    lines += _table(_RUNS_HEADER, []) + _earlier_runs(previous) + _table(_RUNS_HEADER, [[
        result["started_at"], result["code"], f"{result['none_s']:.2f}", f"{result['five_s']:.2f}",
        f"{result['ratio']:.2f}", f"{result['five_without_quarantine_s']:.2f}",
        f"{result['ratio_without_quarantine']:.2f}", cpu_ratio,
        f"{result['load_start']}, {result['load_end']}",
    ]])[2:]
    return lines + ["", "```", result["summary"], "```", ""]


def _earlier_runs(section: list[str] | None) -> list[str]:
    """The rows of the runs table in a section as it stood."""
    if not section:
        return []
    header = _table(_RUNS_HEADER, [])[0]
    start = next((i for i, line in enumerate(section) if line == header), None)
    if start is None:
        return []
    rows = []
    for line in section[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def _closing_summary(lines: list[str], index: int) -> bool:
    """Whether the document's closing summary block (```, then `bench: ...`) starts at `index`."""
    return lines[index] == "```" and index + 1 < len(lines) and lines[index + 1].startswith("bench: ")


def _section_bounds(lines: list[str], heading: str) -> tuple[int, int] | None:
    start = next((i for i, line in enumerate(lines) if line.strip() == heading), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines))
                if lines[i].startswith("## ") or _closing_summary(lines, i)), len(lines))
    return start, end


def section_of(document_text: str, heading: str) -> list[str] | None:
    """The document's section under `heading` as it stands, or None when it has none."""
    lines = document_text.split("\n")
    bounds = _section_bounds(lines, heading)
    return lines[bounds[0]:bounds[1]] if bounds else None


def run_cost_section_of(document_text: str) -> list[str] | None:
    """The document's run-cost section as it stands, or None when it has none."""
    return section_of(document_text, RUN_COST_HEADING)


def replace_section(document_text: str, section: list[str]) -> str:
    """The document with the section headed like `section` replaced by it (added before the
    closing summary block if it has none); everything else as it was."""
    lines = document_text.rstrip("\n").split("\n")
    bounds = _section_bounds(lines, section[0].strip())
    if bounds is None:
        at = next((i for i in range(len(lines)) if _closing_summary(lines, i)), len(lines))
        bounds = (at, at)
    return "\n".join(lines[:bounds[0]] + list(section) + lines[bounds[1]:]).rstrip("\n") + "\n"


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
