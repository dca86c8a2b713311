"""A Delta table's log, read by its path or through a log handle: the latest commit, the table's
state (a property, an application's transaction), the commits after a version.

Read through Delta's own DeltaLog in the JVM: no Spark job, a few calls. tables.py reads a
table's log through the same handle (`at_path`, `current`). Callers hold a log only as an opaque
handle.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from pyspark.sql import SparkSession

from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.jvm.jvm_classes import jvm_class


def at_path(spark: SparkSession, location: str) -> Any:
    """The log of the Delta table at `location` (Delta keeps one per location)."""
    return jvm_class(spark, "org.apache.spark.sql.delta.DeltaLog").forTable(spark._jsparkSession, location)


def latest_commit(spark: SparkSession, log: Any) -> tuple[int, int]:
    """The log's latest version and its commit's time (ms since the epoch), from one look at
    the log; (-1, -1) before the first commit, or without a log (None)."""
    if log is None:
        return -1, -1
    snapshot = current(spark, log)
    version = int(snapshot.version())
    return version, (int(snapshot.timestamp()) if version >= 0 else -1)


def property_and_transaction(
    spark: SparkSession, location: str, key: str, app_id: str
) -> tuple[Optional[str], Optional[int]]:
    """From the current state of the table at `location`, read once (no data read): the value of
    its property `key` and the version of application `app_id`'s last transaction (Delta's
    txnAppId / txnVersion); None for what it does not have."""
    state = current(spark, at_path(spark, location))
    value = state.metadata().configuration().get(key)
    found = state.transactions().get(app_id)
    said = str(value.get()) if value.isDefined() else None
    return said, (int(found.get()) if found.isDefined() else None)


def current(spark: SparkSession, log: Any) -> Any:
    """The log's snapshot as of now (Delta lists the log folder for commits since it last looked)."""
    none = jvm_class(spark, "scala.Option").empty()
    return log.update(False, none, none)


def version_listed(spark: SparkSession, location: str) -> int:
    """The latest version of the Delta table at `location` from one listing of its log folder
    (no state read, nothing cached); -1 when it has no commit."""
    return _latest_commit_listed(hadoop_fs.list_names(spark, f"{location.rstrip('/')}/_delta_log"))


def _latest_commit_listed(names: list[str]) -> int:
    """The highest version among a log folder's commit files; -1 when there is none."""
    return max((int(name[:-5]) for name in names if name.endswith(".json") and name[:-5].isdigit()), default=-1)


def latest_from_checksum(spark: SparkSession, location: str) -> Optional[tuple[int, dict]]:
    """The latest version of the Delta table at `location` and its metaData action, as the
    checksum file Delta writes beside each commit has them: one listing and one small read, no
    JVM for a local table (where Delta's own log handle costs about 0.1 s a table to open in a
    new process). None when the log has no commit or its latest commit no readable checksum
    (not written yet, or a writer that writes none): ask Delta then."""
    folder = f"{location.rstrip('/')}/_delta_log"
    names = hadoop_fs.list_names(spark, folder)
    latest = _latest_commit_listed(names)
    checksum = f"{latest:020d}.crc"
    if latest < 0 or checksum not in names:
        return None
    try:
        metadata = json.loads(hadoop_fs.read_text(spark, f"{folder}/{checksum}")).get("metadata")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(metadata, dict) or "id" not in metadata:
        return None
    return latest, metadata


def table_id(spark: SparkSession, location: str) -> str:
    """Delta's id of the table at `location`: what a stream reading it records in its offsets.
    From its first commit's metaData while the log keeps that commit (one small file), else
    from the table's state."""
    first = f"{location.rstrip('/')}/_delta_log/{0:020d}.json"
    if hadoop_fs.exists(spark, first):
        for line in hadoop_fs.read_text(spark, first).splitlines():
            action = json.loads(line) if line.strip() else {}
            if "metaData" in action:
                return str(action["metaData"]["id"])
    return str(current(spark, at_path(spark, location)).metadata().id())
