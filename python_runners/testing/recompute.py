"""Expected results, computed in batch from everything that landed: the truth streams must match."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from python_runners.demo.data import RECORDING_SCHEMA

DEVICE_COUNT_COLUMNS = ["device_id", "total_recordings"]
WARD_COLUMNS = [
    "ward", "total_recordings", "patients", "avg_heartbeat", "min_heartbeat", "max_heartbeat"
]
# Averages are rounded to 2 places after sums taken in a different order: equal within 0.01.
AVERAGE_TOLERANCE = 0.0101


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


def gold_mismatches(spark: SparkSession, folder) -> list[str]:
    """The gold tables that differ from a batch recompute over the landed files, with both sides."""
    mismatches = []
    streamed = table_rows(spark, "gold.device_counts", DEVICE_COUNT_COLUMNS)
    expected = device_counts(spark, folder)
    if streamed != expected:
        mismatches.append(f"gold.device_counts: {streamed} != recomputed {expected}")
    streamed = table_rows(spark, "gold.ward_heart_rates", WARD_COLUMNS)
    expected = ward_heart_rates(spark, folder)
    if not _rows_match(streamed, expected, average_column=3):
        mismatches.append(f"gold.ward_heart_rates: {streamed} != recomputed {expected}")
    return mismatches


def _rows_match(streamed: list[tuple], expected: list[tuple], average_column: int) -> bool:
    if len(streamed) != len(expected):
        return False
    for got, want in zip(streamed, expected):
        without = lambda row: row[:average_column] + row[average_column + 1:]  # noqa: E731
        if without(got) != without(want):
            return False
        if abs(got[average_column] - want[average_column]) > AVERAGE_TOLERANCE:
            return False
    return True
