"""One batch of the expectations benchmark: the source streamed through a variant's new table,
timed (progress, foreachBatch phases, the JVM's CPU) and checked against what the data says; and
a variant's batches summed up (bench/expectations/__main__.py runs them round by round)."""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median

from bench.expectations.foreach_batch_clock import ForeachBatchClock
from bench.expectations.jvm_cpu import cpu_seconds, jvm_pid
from bench.expectations.rows import Expected, Variant
from bench.harness.stats import medians
from dbt_spark_streaming.lakehouse import Lakehouse

SCHEMA = "bench"
SOURCE = f"{SCHEMA}.recordings"
STREAM_VIEW = "recordings_stream"
PHASES = ("first_write", "second_write", "other", "spark")


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
            "phases_median_s": medians(self.phases, PHASES),
            "jobs_median": {name: median(phases.get(f"{name}_jobs", 0) for phases in self.phases)
                            for name in ("first_write", "second_write", "foreach_batch")},
            "first_write": self.phases[0]["first_write_of"],
        }


@dataclass(frozen=True)
class Batch:
    seconds: float
    phases: dict
    cpu_s: float | None  # the JVM's CPU from the query's start to its end


def one_batch(spark, lakehouse: Lakehouse, variant: Variant, round_: int, clock: ForeachBatchClock,
              should: Expected, rows: int) -> Batch:
    """The source streamed once through a new table and checkpoint; its tables and counts checked."""
    from bench.harness.catch_up import run_to_end
    from dbt_spark_streaming.config.streaming_table import StreamingTableConfig
    from dbt_spark_streaming.config.triggers import AVAILABLE_NOW
    from dbt_spark_streaming.progress.batch import batches_of
    from dbt_spark_streaming.writes.streaming import StreamingWrite

    model = f"{variant.name}_{round_}"
    config = StreamingTableConfig(
        model=model, materialized="streaming_table", output_mode="append", trigger=AVAILABLE_NOW,
        checkpoint=lakehouse.checkpoint_path(f"{SCHEMA}/{model}"), expectations=variant.expectations(model),
    )
    write = StreamingWrite(config=config, source_view=STREAM_VIEW, target_table=f"{SCHEMA}.{model}")
    pid = jvm_pid(spark)
    cpu_before = cpu_seconds(pid)
    query = run_to_end(spark, write, table_exists=False)
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

    from dbt_spark_streaming.config.expectations import FAILED_COLUMN, ExpectationCounts

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
