"""Section 9 of docs/BENCHMARKS.md, from the expectations benchmark's JSON result; the runs the
section listed before stay listed."""

from __future__ import annotations

from bench.harness.doc import NOT_RUN, plural, run_line, table

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
        run_line(result, result["code"]), "",
        "`bench/expectations/` (`python -m bench.expectations`, also `make bench-expectations`): a Delta "
        "table of "
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
        "goes, median seconds (`bench/expectations/foreach_batch_clock.py`, timed inside the same "
        "foreachBatch calls): the first Delta write of the batch, which also reads it and applies the rules; the "
        "second (the quarantine split's other table); the rest of foreachBatch; Spark = the "
        "micro-batch outside foreachBatch:", "",
    ]

    def jobs(row: dict, phase: str) -> str:
        count = row["jobs_median"][phase]
        return "" if count != count else f" ({plural(count, 'job')})"

    def cpu(row: dict) -> str:
        if row.get("cpu_median_s") is None:
            return "-"
        return f"{row['cpu_median_s']:.2f} ({row['cpu_median_s'] / none['cpu_median_s']:.2f})"

    lines += table(
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
    lines += table(_RUNS_HEADER, []) + _earlier_runs(previous) + table(_RUNS_HEADER, [[
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
    header = table(_RUNS_HEADER, [])[0]
    start = next((i for i, line in enumerate(section) if line == header), None)
    if start is None:
        return []
    rows = []
    for line in section[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows
