"""Expected results, computed in batch from everything that landed: the truth streams must match."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from python_runners.demo_data import RECORDING_SCHEMA


def landed_recordings(spark: SparkSession, folder) -> DataFrame:
    """Every readable recording landed so far (unreadable lines are the quarantine's)."""
    frame = (
        spark.read.schema(f"{RECORDING_SCHEMA}, _corrupt_record string")
        .option("columnNameOfCorruptRecord", "_corrupt_record")
        .json(str(folder))
    )
    return frame.where("_corrupt_record is null").drop("_corrupt_record")


def device_counts(spark: SparkSession, folder) -> list[tuple]:
    frame = landed_recordings(spark, folder).groupBy("device_id").agg(F.count("*").alias("n"))
    return sorted(tuple(row) for row in frame.collect())


def ward_heart_rates(spark: SparkSession, folder) -> list[tuple]:
    devices = spark.table("reference.devices")
    frame = (
        landed_recordings(spark, folder)
        .join(devices, "device_id", "left")
        .groupBy(F.coalesce("ward", F.lit("unknown")).alias("ward"))
        .agg(
            F.count("*"),
            F.approx_count_distinct("mrn"),
            F.round(F.avg("heartbeat"), 2),
            F.min("heartbeat"),
            F.max("heartbeat"),
        )
    )
    return sorted(tuple(row) for row in frame.collect())


def table_rows(spark: SparkSession, table: str, columns: list[str]) -> list[tuple]:
    return sorted(tuple(row) for row in spark.table(table).select(*columns).collect())
