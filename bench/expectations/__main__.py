"""Per-batch cost of five expectations on 1M rows against none (issue 22: within 1.2x).

Not a test: it prints what it measured on this machine. One Delta table of recordings (id,
device_id, heartbeat, time, ward, note; bench/expectations/rows.py) is written once, not measured.
Each round then streams all of it, one micro-batch, through the project's own StreamingWrite
(append, availableNow) into a new table with a new checkpoint, once per variant:

- none: no expectations;
- five: 2 warn, 1 drop, 1 fail (no row breaks it), 1 quarantine; 1% of the rows are dropped, 1%
  quarantined, 1.5% warned about;
- five_without_quarantine: the same rules with the quarantine rule a drop rule (the same rows
  reach the table, no quarantine table): the quarantine's own cost is the difference to five.

The variants take turns in a different order each round, so the machine's noise hits each alike;
the first rounds (two by default) warm the JVM up and are not counted. Per-batch time is the
progress's durationMs.triggerExecution; the phases (bench/expectations/foreach_batch_clock.py) are
timed inside the same foreachBatch calls; beside them the JVM's CPU seconds over the query
(bench/expectations/jvm_cpu.py), which other work on a shared machine moves far less than the wall
time. After every batch its tables and counts are checked against what the data says: rows and
sum of ids in the table and the quarantine, the rules each quarantined row failed, and every count
in observedMetrics (bench/expectations/batch.py).

    .venv/bin/python -m bench.expectations [--rows 1000000] [--rounds 5] [--warm-up-rounds 2]
        [--label TEXT] [--result FILE] [--doc docs/BENCHMARKS.md | --no-doc]

Prints `bench expectations: none_s=<median> five_s=<median> ratio=<x> five_without_quarantine_s=...
ratio_without_quarantine=... cpu_ratio=... load=<at start>..<at end>` and rewrites its section of
docs/BENCHMARKS.md, keeping the runs listed there before.
"""

from __future__ import annotations

import argparse
import sys
import time

from bench.expectations.batch import PHASES, SCHEMA, SOURCE, STREAM_VIEW, Measured, one_batch
from bench.expectations.doc import EXPECTATIONS_HEADING, expectations_section
from bench.expectations.foreach_batch_clock import ForeachBatchClock
from bench.expectations.rows import FIVE, FIVE_WITHOUT_QUARANTINE, NONE, VARIANTS, expected, source_sql
from bench.harness.doc import add_doc_arguments, publish_section, read_document, section_of
from bench.harness.fresh_lakehouse import fresh_session
from bench.harness.machine import code_version, load_average, spark_line
from bench.harness.run import Run, command_line

TARGET = 1.2


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.expectations", description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows in the one micro-batch")
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds, after the warm-up rounds")
    parser.add_argument("--warm-up-rounds", type=int, default=2,
                        help="rounds not counted (default 2: the JVM is still compiling hot code after one)")
    parser.add_argument("--label", help="what the code measured is, for the doc's list of runs "
                                        "(default: the commit and uncommitted runtime files)")
    add_doc_arguments(parser)
    args = parser.parse_args(argv)
    if args.rows < 1000 or args.rounds < 1 or args.warm_up_rounds < 0:
        parser.error("--rows needs at least 1000, --rounds at least 1, --warm-up-rounds at least 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run = Run(command_line("python -m bench.expectations", argv), code=args.label or code_version(),
              rows=args.rows, rounds=args.rounds, warm_up_rounds=args.warm_up_rounds)
    spark, lakehouse = fresh_session("expectations")
    print(spark_line(spark, lakehouse), flush=True)
    spark.sql(f"create database if not exists {SCHEMA}")
    source_started = time.perf_counter()
    spark.sql(source_sql(args.rows)).write.format("delta").saveAsTable(SOURCE)
    spark.readStream.name("input").table(SOURCE).createOrReplaceTempView(STREAM_VIEW)
    run.record["source_s"] = time.perf_counter() - source_started
    expectations = {variant.name: expected(variant, args.rows) for variant in VARIANTS}
    print(f"source {SOURCE}: {args.rows:,} rows written in {run.record['source_s']:.1f} s (not measured)",
          flush=True)

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

    result = {**run.end(), "target": TARGET,
              "variants": [results[variant.name].as_json() for variant in VARIANTS], "checked": True}
    result.update(ratios(result))
    result["summary"] = summary_line(result)
    document = read_document(args.doc)
    section = expectations_section(result, section_of(document, EXPECTATIONS_HEADING))
    publish_section(result, section, args, "expectations", document)
    print(run.total_line())
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


if __name__ == "__main__":
    sys.exit(main())
