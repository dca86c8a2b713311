"""Side B of the overhead benchmark: the same five streaming writes as a hand-written PySpark job.

What a data engineer would write without dbt: the devices CSV into a Delta table, then
readStream -> transform -> writeStream.toTable for bronze, silver, quarantine and the two gold
aggregates, each with its own checkpoint and an availableNow trigger, run in dependency order.
Silver checks its rows as the model's expectations do: each rule evaluated once per row in the
stream, counted, and each batch split between silver and its quarantine table by two idempotent
Delta appends. It produces the same tables as the dbt models (same columns, same rows). The
session gets the same settings as the project's (jars, metastore, shuffle partitions), so only
dbt differs.
"""

from __future__ import annotations

import time

PROCESS_STARTED = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from bench.overhead.selection import gold_rows  # noqa: E402
from dbt_spark_streaming.lakehouse import Lakehouse  # noqa: E402
from python_runners import REPO_ROOT  # noqa: E402
from dbt_spark_streaming.jvm.checkpoint_log import OFFSET_LOG_VERSION, SOURCE_NAMING  # noqa: E402
from dbt_spark_streaming.session import session_conf  # noqa: E402

RECORDING_SCHEMA = (
    "recording_id string, device_id int, mrn bigint, time bigint, heartbeat double, "
    "_corrupt_record string"
)
RECORDING_FIELDS = ["recording_id", "device_id", "mrn", "time", "heartbeat", "_corrupt_record"]
SILVER_COLUMNS = ["recording_id", "device_id", "mrn", "recorded_at", "heartbeat", "device_model", "ward"]
# models/silver/silver_recordings.sql's expectations: (name, condition a good row makes true).
QUARANTINED_UNLESS = ("heartbeat_plausible", "heartbeat between 20 and 250")
WARNED_UNLESS = ("device_known", "device_model is not null")
DROPPED_UNLESS = ("not_from_the_future", "recorded_at <= current_timestamp()")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.overhead.handwritten_pipeline")
    parser.add_argument("--result", type=Path, required=True)
    args = parser.parse_args(argv)
    imported = time.perf_counter()

    lakehouse = Lakehouse.from_env()
    builder = SparkSession.builder
    for key, value in session_conf(lakehouse, "local[*]").items():
        builder = builder.config(key, value)
    # Hand-written as Spark's defaults have it: streaming sources without names.
    builder = builder.config(SOURCE_NAMING, "false").config(OFFSET_LOG_VERSION, "1")
    spark = builder.enableHiveSupport().getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    session_ready = time.perf_counter()

    streams = run_pipeline(spark, lakehouse)
    finished = time.perf_counter()
    args.result.write_text(json.dumps({
        "imports_s": imported - PROCESS_STARTED,
        "jvm_start_s": session_ready - imported,
        "processing_s": finished - session_ready,
        "streams": streams,
        "gold_rows": gold_rows(spark),
    }, indent=1))
    return 0


def run_pipeline(spark: SparkSession, lakehouse: Lakehouse) -> dict:
    for schema in ("reference", "bronze", "silver", "gold"):
        spark.sql(f"create database if not exists {schema}")
    devices = spark.read.option("header", True).schema(
        "device_id int, device_model string, ward string"
    ).csv(str(REPO_ROOT / "seeds" / "devices.csv"))
    devices.write.format("delta").mode("overwrite").saveAsTable("reference.devices")

    def write(frame, table: str, output_mode: str, foreach_batch=None) -> dict:
        writer = (
            frame.writeStream.outputMode(output_mode)
            .option("checkpointLocation", f"{lakehouse.checkpoints}/{table.replace('.', '/')}")
            .trigger(availableNow=True).queryName(table)
        )
        if foreach_batch is None:
            query = writer.format("delta").toTable(table)
        else:
            query = writer.foreachBatch(foreach_batch).start()
        query.awaitTermination()
        batches = [p for p in query.recentProgress if "addBatch" in (p.get("durationMs") or {})]
        return {
            "rows": sum(p["numInputRows"] for p in batches), "batches": len(batches),
            "batch_ms": sum(p["durationMs"]["triggerExecution"] for p in batches),
        }

    streams = {"bronze_recordings": write(bronze(spark, lakehouse), "bronze.bronze_recordings", "append")}
    recordings = spark.readStream.table("bronze.bronze_recordings")
    silver = (
        recordings.where("_corrupt_record is null")
        .select("recording_id", "device_id", "mrn", F.col("heartbeat").cast("double").alias("heartbeat"),
                F.timestamp_seconds("time").alias("recorded_at"))
        .join(spark.table("reference.devices"), "device_id", "left")
        .select(*SILVER_COLUMNS)
    )
    streams["silver_recordings"] = write(
        checked(silver), "silver.silver_recordings", "append",
        split_quarantine("silver.silver_recordings", "silver.silver_recordings__quarantine"),
    )
    quarantined = recordings.where("_corrupt_record is not null").select(
        "source_file", "ingested_at", F.col("_corrupt_record").alias("raw_record"))
    streams["quarantined_recordings"] = write(quarantined, "silver.quarantined_recordings", "append")

    enriched = spark.readStream.table("silver.silver_recordings")
    counts = enriched.groupBy("device_id").agg(F.count("*").alias("total_recordings"))
    streams["device_counts"] = write(counts, "gold.device_counts", "complete")
    per_ward = enriched.groupBy(F.coalesce("ward", F.lit("unknown")).alias("ward")).agg(
        F.count("*").alias("total_recordings"),
        F.approx_count_distinct("mrn").alias("patients"),
        F.round(F.avg("heartbeat"), 2).alias("avg_heartbeat"),
        F.min("heartbeat").alias("min_heartbeat"),
        F.max("heartbeat").alias("max_heartbeat"),
    )
    streams["ward_heart_rates"] = write(per_ward, "gold.ward_heart_rates", "complete")
    return streams


def checked(silver):
    """Silver's rows with each rule's outcome (null fails), counted in the batch's progress.
    Evaluated in the stream, so current_timestamp() is the batch's own, as in the model."""
    rules = (QUARANTINED_UNLESS, WARNED_UNLESS, DROPPED_UNLESS)
    flagged = silver.select(
        *SILVER_COLUMNS,
        *(F.coalesce(F.expr(condition), F.lit(False)).alias(name) for name, condition in rules),
    )
    quarantined, dropped = ~F.col(QUARANTINED_UNLESS[0]), ~F.col(DROPPED_UNLESS[0])
    return flagged.observe(
        "expectations",
        F.count(F.lit(1)).alias("rows"),
        F.count_if(quarantined).alias("quarantined"),
        F.count_if(dropped & ~quarantined).alias("dropped"),
        *(F.count_if(~F.col(name)).alias(name) for name, _ in rules),
    )


def split_quarantine(table: str, quarantine: str):
    """A foreachBatch function: implausible rows, with every rule they failed, to the quarantine;
    the rows passing the quarantine and drop rules to silver. Each append carries the batch id as
    Delta's transaction version, so a replayed batch is written once."""
    rules = (QUARANTINED_UNLESS, WARNED_UNLESS, DROPPED_UNLESS)
    failed = F.filter(
        F.array(*(F.when(~F.col(name), F.lit(name)) for name, _ in rules)), lambda name: name.isNotNull()
    )

    def append(frame, target: str, batch_id: int) -> None:
        (frame.write.format("delta").mode("append")
         .option("txnAppId", target).option("txnVersion", batch_id).saveAsTable(target))

    def write_batch(batch, batch_id: int) -> None:
        cached = batch.persist()
        try:
            append(cached.where(~F.col(QUARANTINED_UNLESS[0])).select(
                *SILVER_COLUMNS, failed.alias("_failed_expectations"),
                F.current_timestamp().alias("_quarantined_at"),
            ), quarantine, batch_id)
            kept = cached.where(F.col(QUARANTINED_UNLESS[0]) & F.col(DROPPED_UNLESS[0]))
            append(kept.select(*SILVER_COLUMNS), table, batch_id)
        finally:
            cached.unpersist()

    return write_batch


def bronze(spark: SparkSession, lakehouse: Lakehouse):
    """JSON lines parsed with the schema; unreadable lines kept whole, unknown fields kept as JSON."""
    lines = spark.readStream.format("text").load(lakehouse.landing_path("recordings"))
    options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_corrupt_record"}
    extra_fields = F.map_filter(
        F.from_json("value", "map<string,variant>"),
        lambda key, _: ~key.isin(RECORDING_FIELDS),
    )
    return (
        lines.where(F.trim("value") != "")
        .select(F.from_json("value", RECORDING_SCHEMA, options).alias("r"), extra_fields.alias("extra"),
                "_metadata")
        .select(
            "r.*",
            F.when(F.size("extra") > 0, F.to_json("extra")).alias("_rescued_data"),
            F.col("_metadata.file_path").alias("source_file"),
            F.current_timestamp().alias("ingested_at"),
        )
    )


if __name__ == "__main__":
    raise SystemExit(main())
