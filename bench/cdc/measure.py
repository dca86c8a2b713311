"""One key count of the CDC apply benchmark: the source of change rows, the SCD1 and SCD2 tables
loaded in bulk, the measured batches through the project's cdc_table write, and the check that the
tables hold what the feed says (bench/cdc/__main__.py runs it per key count)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from statistics import median

from bench.cdc.feed import (
    CONFIG, FEED_COLUMNS, FEED_SCHEMA, ChangeFeed, append_changes, bootstrap_rows, loaded_rows,
)
from bench.cdc.phases import PHASES, PhaseClock
from bench.harness.catch_up import CatchUp, timed_catch_up
from bench.harness.stats import medians
from dbt_spark_streaming.lakehouse import Lakehouse

SCHEMA = "bench"
STORED_AS = ("scd1", "scd2")
MERGE_METRICS = ("executionTimeMs", "scanTimeMs", "rewriteTimeMs", "numTargetFilesRemoved",
                 "numTargetFilesAdded", "numTargetRowsCopied", "numSourceRows")


@dataclass
class Measured:
    keys: int
    stored_as: str
    load_s: float = 0.0
    catch_ups: list[CatchUp] = field(default_factory=list)
    phases: list[dict[str, float]] = field(default_factory=list)  # one per measured batch
    merges: list[dict[str, int]] = field(default_factory=list)  # the table's MERGE commit metrics
    tombstone_merges: list[dict[str, int]] = field(default_factory=list)  # the tombstones' MERGEs
    tombstone_commits: list[str] = field(default_factory=list)  # the operation of each of their commits
    warmup_s: float = 0.0

    def as_json(self, rows_per_batch: int) -> dict:
        batch_s = [ms / 1000 for run in self.catch_ups for ms in run.trigger_execution_ms]
        add_batch_s = [ms / 1000 for run in self.catch_ups for ms in run.add_batch_ms]
        per_batch = lambda values: median(values) if values else None  # noqa: E731
        return {
            "keys": self.keys, "stored_as": self.stored_as, "batches": len(batch_s),
            "batch_s": batch_s, "median_s": median(batch_s), "max_s": max(batch_s),
            "add_batch_median_s": median(add_batch_s),
            "wall_median_s": median(run.wall_ms / 1000 for run in self.catch_ups),
            "rows_per_batch": rows_per_batch,
            "rows_written_per_batch": median(run.rows_written for run in self.catch_ups),
            "rows_in_files_per_batch": median(run.rows_rewritten for run in self.catch_ups),
            "files_touched_per_batch": median(run.files_touched for run in self.catch_ups),
            "table_files": self.catch_ups[-1].table_files,
            "rows_read_per_batch": per_batch([run.rows_read for run in self.catch_ups if run.rows_read is not None]),
            "unexpected_batch_counts": [run.batches for run in self.catch_ups if run.batches != 1],
            "phases_median_s": medians(self.phases) if self.phases else {},
            "spark_median_s": median(
                run.trigger_execution_ms[0] / 1000 - p["foreach_batch"]
                for run, p in zip(self.catch_ups, self.phases) if run.trigger_execution_ms
            ) if self.phases else None,
            "merge_median": _medians(self.merges),
            "tombstones_merge_median": _medians(self.tombstone_merges),
            "tombstones_commits": {operation: self.tombstone_commits.count(operation)
                                   for operation in sorted(set(self.tombstone_commits))},
            "load_s": self.load_s, "warmup_s": self.warmup_s,
        }


def _medians(merges: list[dict[str, int]]) -> dict[str, float]:
    return medians(merges, MERGE_METRICS, missing=0) if merges else {}


def commits_since(spark, table: str, version: int) -> tuple[list[str], list[dict[str, int]]]:
    """The operations of the commits after `version`, and the MERGE commits' metrics."""
    from dbt_spark_streaming.delta import tables as delta_tables
    commits = delta_tables.commits_since(spark, table, version)
    return [operation for operation, _ in commits], [
        {name: int(metrics.get(name, 0)) for name in MERGE_METRICS}
        for operation, metrics in commits if operation == "MERGE"]


def measure_size(spark, lakehouse: Lakehouse, feed: ChangeFeed, batches: int, files: int,
                 clock: PhaseClock) -> list[Measured]:
    from dbt_spark_streaming.config.cdc import ApplyChanges
    from dbt_spark_streaming.config.streaming_table import CdcTableConfig
    from dbt_spark_streaming.config.triggers import AVAILABLE_NOW
    from dbt_spark_streaming.writes.cdc.apply_changes import create_tables_if_missing
    from dbt_spark_streaming.writes.cdc.change_rows import FeedShape
    from dbt_spark_streaming.writes.streaming import StreamingWrite

    keys = feed.keys
    source, stream_view, model_view = f"{SCHEMA}.cdc_changes_{keys}", f"cdc_stream_{keys}", f"cdc_feed_{keys}"
    spark.sql(f"create table {source} ({FEED_SCHEMA}) using delta")
    append_changes(spark, source, bootstrap_rows())
    spark.readStream.name("changes").table(source).createOrReplaceTempView(stream_view)
    spark.sql(f"select {', '.join(FEED_COLUMNS)} from {stream_view}").createOrReplaceTempView(model_view)

    writes, results = {}, {}
    for stored_as in STORED_AS:
        name = f"{stored_as}_{keys}"
        changes = ApplyChanges.from_config(name, {**CONFIG, "stored_as": stored_as})
        config = CdcTableConfig(
            model=name, materialized="cdc_table", output_mode="append", trigger=AVAILABLE_NOW,
            checkpoint=lakehouse.checkpoint_path(f"{SCHEMA}/{name}"), changes=changes,
        )
        write = StreamingWrite(config=config, source_view=model_view, target_table=f"{SCHEMA}.{name}")
        shape = FeedShape(changes, spark.table(model_view).schema)
        create_tables_if_missing(spark, shape, write.target_table, (), write.recorded_on_table, exists=False)
        timed_catch_up(spark, write)  # the bootstrap delete: the checkpoint's first batch
        clock.take()
        load_started = time.perf_counter()
        loaded_rows(spark, keys, shape.table_schema(), files, stored_as == "scd2").write.format("delta") \
            .mode("append").saveAsTable(write.target_table)
        writes[stored_as] = write
        results[stored_as] = Measured(keys, stored_as, load_s=time.perf_counter() - load_started)
        print(f"  {stored_as}: {keys} rows loaded in bulk in {results[stored_as].load_s:.1f} s", flush=True)

    from dbt_spark_streaming.delta import tables as delta_tables
    for round_ in range(1 + batches):
        append_changes(spark, source, feed.next_batch())
        # Alternate the order, so neither always runs right after the other (GC, caches).
        for stored_as in STORED_AS if round_ % 2 == 0 else reversed(STORED_AS):
            write, result = writes[stored_as], results[stored_as]
            tombstones = write.config.changes.tombstones_table(write.target_table)
            before = delta_tables.current_version(spark, write.target_table)
            tombstones_before = delta_tables.current_version(spark, tombstones)
            catch_up = timed_catch_up(spark, write)
            phases = clock.take()
            seconds = sum(catch_up.trigger_execution_ms) / 1000
            label = "warm-up" if round_ == 0 else f"batch {round_}"
            print(f"  {stored_as} {label}: {seconds:.2f} s (" + ", ".join(
                f"{name} {sum(p[name] for p in phases):.2f} s/{sum(p.get(f'{name}_jobs', 0) for p in phases):.0f} jobs"
                for name in PHASES) + ")", flush=True)
            if round_ == 0:
                result.warmup_s = seconds
                continue
            result.catch_ups.append(catch_up)
            result.phases += phases
            result.merges += commits_since(spark, write.target_table, before)[1]
            operations, merges = commits_since(spark, tombstones, tombstones_before)
            result.tombstone_commits += operations
            result.tombstone_merges += merges
    return [results[stored_as] for stored_as in STORED_AS]


def check_tables(spark, feed: ChangeFeed, keys: int) -> list[str]:
    """What differs between the tables and what the feed says they hold; empty when nothing."""
    from pyspark.sql import functions as F

    problems = []
    scd1 = spark.table(f"{SCHEMA}.scd1_{keys}").agg(F.count("*"), F.sum("lsn")).first()
    if tuple(scd1) != (feed.live_keys, feed.live_lsn_sum):
        problems.append(f"scd1 holds {scd1[0]} rows, sum(lsn) {scd1[1]}; expected {feed.live_keys}, "
                        f"{feed.live_lsn_sum}")
    scd2 = spark.table(f"{SCHEMA}.scd2_{keys}").agg(
        F.count("*"), F.count(F.when(F.col("__end_at").isNull(), 1)),
        F.sum(F.when(F.col("__end_at").isNull(), F.col("lsn"))),
        F.count(F.when(F.col("__end_at") <= F.col("__start_at"), 1)),
    ).first()
    expected = (feed.scd2_rows, feed.live_keys, feed.live_lsn_sum, 0)
    if tuple(scd2) != expected:
        problems.append(f"scd2 holds (rows, current rows, sum of current lsn, versions ending before they "
                        f"start) {tuple(scd2)}; expected {expected}")
    return problems
