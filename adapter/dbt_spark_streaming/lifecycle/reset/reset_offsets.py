"""Where each input of a reset model starts: Delta versions and timestamps, Kafka offsets.

At the reset a Delta input's latest version is recorded; at each run while the reset is pending,
the starting point becomes the reader options Delta and Kafka take (startingVersion,
startingTimestamp, startingOffsets), worked out then.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Mapping
from zoneinfo import ZoneInfo

from pyspark.sql import SparkSession

from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.delta import log as delta_log
from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.lifecycle.reset.reset_arguments import StartingPoint
from dbt_spark_streaming.lifecycle.reset.reset_record import Input, Reset

# Kafka's own starting options, which a reset's replace.
_KAFKA_STARTS = ("startingOffsets", "startingTimestamp", "startingOffsetsByTimestamp")


def with_latest_version(spark: SparkSession, read: Input, landing_path) -> Input:
    """A Delta input with its latest version now (and its path resolved); others as they are."""
    if not read.is_delta:
        return read
    version = _latest_version(spark, read, landing_path)
    return replace(read, latest_version=version, path=landing_path(read.path) if read.path else None)


def _latest_version(spark: SparkSession, read: Input, landing_path) -> int:
    if read.kind == "delta_table":
        snapshot = delta_tables.snapshot(spark, read.table)
        return snapshot.version if snapshot.exists else -1
    location = landing_path(read.path)
    if not hadoop_fs.exists(spark, location.rstrip("/") + "/_delta_log"):
        return -1
    return delta_tables.log_folder_and_version(spark, location)[1]


def delta_options(spark: SparkSession, reset: Reset, read: Input) -> dict[str, str]:
    """Delta's starting option for the input, worked out now."""
    point = reset.point
    if point.kind == "version":
        return {"startingVersion": str(point.version)}
    if read.kind == "delta_table":
        log = delta_tables.log_handle(spark, read.table)
    else:
        log = delta_log.at_path(spark, read.path)
    latest, last_commit_ms = delta_log.latest_commit(spark, log)
    # Never 'latest': Delta works that out when the query starts, and a commit landing between
    # this call and then would be skipped. A version that does not exist yet fails the start
    # with DELTA_VERSION_NOT_FOUND instead, which the run reports as nothing new since the reset
    # (writes/streaming.py), the reset still pending.
    if point.kind == "now":
        after = read.latest_version if read.latest_version is not None else -1
        return {"startingVersion": str(after + 1)}
    if point.timestamp_ms > last_commit_ms:
        return {"startingVersion": str(latest + 1)}
    # Delta reads the time in the session's time zone.
    return {"startingTimestamp": _in_zone(point.timestamp_ms, spark.conf.get("spark.sql.session.timeZone"))}


def kafka_options(options: Mapping[str, str], point: StartingPoint) -> dict[str, str]:
    """A Kafka source's options with the starting point's instead of its own."""
    started = {k: v for k, v in options.items() if k not in _KAFKA_STARTS}
    if point.kind == "offsets":
        started["startingOffsets"] = point.offsets
    else:
        started.update(startingTimestamp=str(point.timestamp_ms), startingOffsetsByTimestampStrategy="latest")
    return started


def _in_zone(ms: int, zone: str) -> str:
    moment = datetime.fromtimestamp(ms / 1000, ZoneInfo(zone))
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}"
