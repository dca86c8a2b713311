"""The events the incremental-vs-recompute benchmark reads: a Delta table that only grows.

Event n is the same in every run (deterministic), its time is n seconds after a fixed start, so
each appended slice is newer than everything before it, as a stream's data is.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

ACCOUNTS = 10_000
START_EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z
COUNTRIES = "array('de', 'fr', 'nl', 'us', 'gb')"


def append_events(spark: SparkSession, path: str, first: int, count: int) -> None:
    """Events first..first+count-1; every 997th has no amount (the silver model drops it)."""
    events = spark.range(first, first + count).selectExpr(
        "id as event_id",
        f"id % {ACCOUNTS} as account_id",
        "case when id % 997 = 0 then null else (id * 7919 % 100000) / 100.0 end as amount",
        f"element_at({COUNTRIES}, cast(id % 5 as int) + 1) as country",
        f"timestamp_seconds({START_EPOCH} + id) as event_time",
    )
    events.write.format("delta").mode("append").save(path)


def warm_up_jvm(spark: SparkSession, folder: str) -> None:
    """Run, on a few rows under `folder`, the kinds of work every variant's first run does: a
    batch Delta write, read and aggregate (table, incremental) and Delta-to-Delta streams,
    stateless and aggregating (streaming_table). Whichever variant ran first would otherwise pay
    alone for the JVM's loading and compiling of that code: seconds, not what a first run over
    history costs."""
    events = f"{folder}/events"
    append_events(spark, events, 0, 1000)
    spark.read.format("delta").load(events).groupBy("account_id").count().write.format("delta") \
        .mode("overwrite").save(f"{folder}/totals")
    for name, output_mode, query in (
        ("clean", "append", lambda frame: frame.where("amount is not null")),
        ("totals", "complete", lambda frame: frame.groupBy("account_id").count()),
    ):
        stream = query(spark.readStream.name("input").format("delta").load(events)).writeStream \
            .format("delta").outputMode(output_mode) \
            .option("checkpointLocation", f"{folder}/checkpoints/{name}") \
            .trigger(availableNow=True).start(f"{folder}/stream_{name}")
        stream.awaitTermination()
