"""Per-batch cost of five expectations on 1M rows against none (issue 22: within 1.2x).

Not a test: it prints what it measured on this machine. One Delta table of recordings (id,
device_id, heartbeat, time, ward, note; bench/expectation_rows.py) is written once, not measured.
Each round then streams all of it, one micro-batch, through the project's own StreamingWrite
(append, availableNow) into a new table with a new checkpoint, once per variant:

- none: no expectations;
- five: 2 warn, 1 drop, 1 fail (no row breaks it), 1 quarantine; 1% of the rows are dropped, 1%
  quarantined, 1.5% warned about;
- five_without_quarantine: the same rules with the quarantine rule a drop rule (the same rows
  reach the table, no quarantine table): the quarantine's own cost is the difference to five.

The variants take turns in a different order each round, so the machine's noise hits each alike;
the first rounds (two by default) warm the JVM up and are not counted. Per-batch time is the
progress's durationMs.triggerExecution; the phases (bench/foreach_batch_clock.py) are timed inside
the same foreachBatch calls; beside them the JVM's CPU seconds over the query (bench/jvm_cpu.py),
which other work on a shared machine moves far less than the wall time. After every batch its tables and counts are checked against what the data
says: rows and sum of ids in the table and the quarantine, the rules each quarantined row failed,
and every count in observedMetrics.

    .venv/bin/python -m bench.expectations [--rows 1000000] [--rounds 5] [--warm-up-rounds 2]
        [--label TEXT] [--result FILE] [--doc docs/BENCHMARKS.md | --no-doc]

Prints `bench expectations: none_s=<median> five_s=<median> ratio=<x> five_without_quarantine_s=...
ratio_without_quarantine=... cpu_ratio=... load=<at start>..<at end>` and rewrites its section of
docs/BENCHMARKS.md, keeping the runs listed there before.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from statistics import median

from bench.benchmarks_doc import EXPECTATIONS_HEADING, expectations_section, replace_section, section_of
from bench.cdc_apply import code_version
from bench.expectation_rows import FIVE, FIVE_WITHOUT_QUARANTINE, NONE, VARIANTS, Expected, Variant, expected, source_sql
from bench.foreach_batch_clock import ForeachBatchClock
from bench.fresh_lakehouse import use_fresh_bench_lakehouse
from bench.jvm_cpu import cpu_seconds, jvm_pid
from bench.machine import load_average
from bench.report import minutes_and_seconds
from python_runners.runtime.lakehouse import REPO_ROOT, Lakehouse

SCHEMA = "bench"
SOURCE = f"{SCHEMA}.recordings"
STREAM_VIEW = "recordings_stream"
TARGET = 1.2
PHASES = ("first_write", "second_write", "other", "spark")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.expectations", description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows in the one micro-batch")
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds, after the warm-up rounds")
    parser.add_argument("--warm-up-rounds", type=int, default=2,
                        help="rounds not counted (default 2: the JVM is still compiling hot code after one)")
    parser.add_argument("--label", help="what the code measured is, for the doc's list of runs "
                                        "(default: the commit and uncommitted runtime files)")
    parser.add_argument("--result", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--doc", type=Path, default=REPO_ROOT / "docs" / "BENCHMARKS.md")
    parser.add_argument("--no-doc", action="store_true", help="leave docs/BENCHMARKS.md alone")
    args = parser.parse_args(argv)
    if args.rows < 1000 or args.rounds < 1 or args.warm_up_rounds < 0:
        parser.error("--rows needs at least 1000, --rounds at least 1, --warm-up-rounds at least 0")
    return args


@dataclass
class Measured:
    variant: Variant
    batch_s: list[float] = field(default_factory=list)
    phases: list[dict] = field(default_factory=list)
    loads: list[str] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)  # the JVM's CPU over each measured query
    warmup_s: list[float] = field(default_factory=list)

    def as_json(self) -> dict:
        return {
            "variant": self.variant.name, "rules": [rule["action"] for rule in self.variant.rules],
            "batch_s": self.batch_s, "median_s": median(self.batch_s), "max_s": max(self.batch_s),
            "min_s": min(self.batch_s), "warmup_s": self.warmup_s, "loads": self.loads,
            "cpu_s": self.cpu_s, "cpu_median_s": median(self.cpu_s) if self.cpu_s else None,
            "phases_median_s": {name: median(phases[name] for phases in self.phases) for name in PHASES},
            "jobs_median": {name: median(phases.get(f"{name}_jobs", 0) for phases in self.phases)
                            for name in ("first_write", "second_write", "foreach_batch")},
            "first_write": self.phases[0]["first_write_of"],
        }


@dataclass(frozen=True)
class Batch:
    seconds: float
    phases: dict
    cpu_s: float | None  # the JVM's CPU from the query's start to its end


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    run = {"started_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M"),
           "command": "python -m bench.expectations " + shlex.join(argv if argv is not None else sys.argv[1:]),
           "load_start": load_average(), "code": args.label or code_version(), "rows": args.rows,
           "rounds": args.rounds, "warm_up_rounds": args.warm_up_rounds}
    use_fresh_bench_lakehouse("expectations")
    # Imported only now, so nothing can build a session before LAKEHOUSE_DIR points at the bench.
    from python_runners.runtime.session import get_or_create_session

    lakehouse = Lakehouse.from_env()
    spark = get_or_create_session(lakehouse)
    print(f"spark {spark.version}, shuffle partitions {spark.conf.get('spark.sql.shuffle.partitions')}, "
          f"{os.cpu_count()} cores, load average {load_average()}; lakehouse {lakehouse.root} (wiped at start)",
          flush=True)
    spark.sql(f"create database if not exists {SCHEMA}")
    source_started = time.perf_counter()
    spark.sql(source_sql(args.rows)).write.format("delta").saveAsTable(SOURCE)
    spark.readStream.table(SOURCE).createOrReplaceTempView(STREAM_VIEW)
    run["source_s"] = time.perf_counter() - source_started
    expectations = {variant.name: expected(variant, args.rows) for variant in VARIANTS}
    print(f"source {SOURCE}: {args.rows:,} rows written in {run['source_s']:.1f} s (not measured)", flush=True)

    results = {variant.name: Measured(variant) for variant in VARIANTS}
    with ForeachBatchClock().installed() as clock:
        for round_ in range(args.warm_up_rounds + args.rounds):
            # Rotated each round, so no variant always runs first or right after another.
            order = VARIANTS[round_ % len(VARIANTS):] + VARIANTS[:round_ % len(VARIANTS)]
            warm_up = round_ < args.warm_up_rounds
            for variant in order:
                load = load_average()
                batch = one_batch(spark, lakehouse, variant, round_, clock, expectations[variant.name], args.rows)
                label = "warm-up" if warm_up else f"round {round_ - args.warm_up_rounds + 1}"
                cpu = "" if batch.cpu_s is None else f"; JVM CPU {batch.cpu_s:.2f} s"
                print(f"  {variant.name} {label}: {batch.seconds:.2f} s ("
                      + ", ".join(f"{name} {batch.phases[name]:.2f} s" for name in PHASES)
                      + f"; first write: {batch.phases['first_write_of']}{cpu}; load {load})", flush=True)
                measured = results[variant.name]
                if warm_up:
                    measured.warmup_s.append(batch.seconds)
                    continue
                measured.batch_s.append(batch.seconds)
                measured.phases.append(batch.phases)
                measured.loads.append(load)
                if batch.cpu_s is not None:
                    measured.cpu_s.append(batch.cpu_s)

    run["duration_min"] = (time.monotonic() - started) / 60
    run["load_end"] = load_average()
    result = {**run, "target": TARGET, "variants": [results[variant.name].as_json() for variant in VARIANTS],
              "checked": True}
    result.update(ratios(result))
    result["summary"] = summary_line(result)
    if args.result:
        args.result.write_text(json.dumps(result, indent=1))
    document = args.doc.read_text() if args.doc.exists() else "# Benchmarks\n"
    section = expectations_section(result, section_of(document, EXPECTATIONS_HEADING))
    print()
    print("\n".join(section[:-4]))  # the summary line last
    print(result["summary"])
    if not args.no_doc:
        args.doc.write_text(replace_section(document, section))
        print(f"bench expectations: wrote its section of {args.doc}")
    print(f"total wall time {minutes_and_seconds(time.monotonic() - started)}, load average at the end "
          f"{load_average()}")
    return 0


def ratios(result: dict) -> dict:
    medians = {row["variant"]: row["median_s"] for row in result["variants"]}
    cpu = {row["variant"]: row["cpu_median_s"] for row in result["variants"]}
    return {
        "none_s": medians[NONE.name], "five_s": medians[FIVE.name],
        "ratio": medians[FIVE.name] / medians[NONE.name],
        "five_without_quarantine_s": medians[FIVE_WITHOUT_QUARANTINE.name],
        "ratio_without_quarantine": medians[FIVE_WITHOUT_QUARANTINE.name] / medians[NONE.name],
        "cpu_ratio": _ratio(cpu[FIVE.name], cpu[NONE.name]),
        "cpu_ratio_without_quarantine": _ratio(cpu[FIVE_WITHOUT_QUARANTINE.name], cpu[NONE.name]),
    }


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return None if numerator is None or not denominator else numerator / denominator


def summary_line(result: dict) -> str:
    return (f"bench expectations: none_s={result['none_s']:.2f} five_s={result['five_s']:.2f} "
            f"ratio={result['ratio']:.2f} five_without_quarantine_s={result['five_without_quarantine_s']:.2f} "
            f"ratio_without_quarantine={result['ratio_without_quarantine']:.2f} "
            + ("" if result["cpu_ratio"] is None else f"cpu_ratio={result['cpu_ratio']:.2f} ")
            + f"load={result['load_start']}..{result['load_end']}")


def one_batch(spark, lakehouse: Lakehouse, variant: Variant, round_: int, clock: ForeachBatchClock,
              should: Expected, rows: int) -> Batch:
    """The source streamed once through a new table and checkpoint; its tables and counts checked."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    from python_runners.runtime.errors import explain
    from python_runners.runtime.progress.batch import batches_of
    from python_runners.runtime.config.triggers import AVAILABLE_NOW
    from python_runners.runtime.writes.streaming import StreamingWrite, start_streaming_write

    model = f"{variant.name}_{round_}"
    write = StreamingWrite(
        model=model, source_view=STREAM_VIEW, target_table=f"{SCHEMA}.{model}", output_mode="append",
        trigger=AVAILABLE_NOW, checkpoint=lakehouse.checkpoint_path(f"{SCHEMA}/{model}"),
        expectations=variant.expectations(model),
    )
    pid = jvm_pid(spark)
    cpu_before = cpu_seconds(pid)
    query = start_streaming_write(spark, write, table_exists=False)
    try:
        query.awaitTermination()
    except (PySparkException, Py4JJavaError) as error:
        raise explain(model, error) from None
    cpu_after = cpu_seconds(pid)
    batches = batches_of(query)
    records = clock.take()
    problems = check_batch(spark, write, batches, should, rows)
    if len(records) != 1:
        problems.append(f"{len(records)} foreachBatch calls timed, expected 1")
    if problems:
        raise SystemExit(f"FAILED {model}: " + "; ".join(problems))
    cpu = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
    return Batch(batches[0].duration_ms / 1000, phases_of(records[0], batches[0].duration_ms / 1000), cpu)


def phases_of(record: dict, batch_s: float) -> dict:
    """A foreachBatch record as the report's phases: the first Delta write (which also computes
    the batch), the second (the quarantine split's), the rest of the call, and Spark's own part."""
    first = record["first_write"]
    second = "quarantine" if first == "table" else "table"
    return {
        "first_write": record[first], "first_write_jobs": record[f"{first}_jobs"], "first_write_of": first,
        "second_write": record.get(second, 0.0), "second_write_jobs": record.get(f"{second}_jobs", 0),
        "other": record["other"], "foreach_batch": record["foreach_batch"],
        "foreach_batch_jobs": record["foreach_batch_jobs"],
        "spark": max(0.0, batch_s - record["foreach_batch"]),
    }


def check_batch(spark, write, batches, should: Expected, rows: int) -> list[str]:
    """What differs between the batch's tables and counts and what the data says; empty when nothing."""
    from pyspark.sql import functions as F

    from python_runners.runtime.config.expectations import FAILED_COLUMN, ExpectationCounts

    problems = []
    if [batch.input_rows for batch in batches] != [rows]:
        problems.append(f"batches read {[batch.input_rows for batch in batches]} rows, expected one of {rows}")
        return problems
    table = tuple(spark.table(write.target_table).agg(F.count("*"), F.sum("id")).first())
    if table != (should.table_rows, should.table_id_sum):
        problems.append(f"table holds {table} (rows, sum of ids), expected "
                        f"{(should.table_rows, should.table_id_sum)}")
    if write.quarantine_table is not None:
        quarantine = tuple(spark.table(write.quarantine_table).agg(
            F.count("*"), F.sum("id"), F.collect_set(F.array_join(FAILED_COLUMN, ","))).first())
        wanted = (should.quarantined_rows, should.quarantined_id_sum, ["not_from_the_future"])
        if quarantine[:2] != wanted[:2] or sorted(quarantine[2]) != wanted[2]:
            problems.append(f"quarantine holds {quarantine} (rows, sum of ids, rules failed), expected {wanted}")
    elif should.quarantined_rows:
        problems.append("no quarantine table, yet rows should be quarantined")
    if counted(batches[0].expectations) != counted(ExpectationCounts.from_metrics(should.metrics)):
        problems.append(f"observed {batches[0].raw.get('observedMetrics')}, expected {should.metrics}")
    return problems


def counted(counts) -> tuple:
    """Counts as comparable values, the rules in any order."""
    return (counts.rows_checked, counts.rows_dropped, counts.rows_quarantined,
            sorted((rule.name, rule.action, rule.rows_failed) for rule in counts.rules))


if __name__ == "__main__":
    sys.exit(main())
