"""The Delta tables streaming models write to.

Facts about a table (does it exist, its version, its properties, what recent commits wrote) are
read from its Delta log, the way Delta itself plans a query: the catalog entry, the log's commit
files since the last checkpoint and the checksum file. `DeltaTable.detail()` and `.history()`
would each run a Spark job over the whole table state or history, seconds per model per run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from delta.tables import DeltaTable
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession
from pyspark.sql.types import StructType
from py4j.protocol import Py4JJavaError

from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.jvm.jvm_classes import jvm_class
from dbt_spark_streaming.delta.log import at_path, current, latest_from_checksum
from dbt_spark_streaming.errors import StreamingModelError

_NOT_FOUND = ("TABLE_OR_VIEW_NOT_FOUND", "NoSuchTableException", "SCHEMA_NOT_FOUND", "NoSuchDatabaseException")


@dataclass(frozen=True)
class TableSnapshot:
    exists: bool
    version: int = -1  # the latest Delta version; -1 when there is no table (or no Delta log)
    properties: Mapping[str, str] = field(default_factory=dict)
    table_id: str = ""  # Delta's id of the table: what a streaming reader's checkpoint records
    log: Any = field(default=None, repr=False, compare=False)  # the JVM DeltaLog, to read it again

    def refreshed(self, spark: SparkSession, table: str) -> "TableSnapshot":
        """The same table read again through its log handle (opened now if it was not), which
        reads the commits since (`commits_since`)."""
        return snapshot(spark, table, self.log if self.log is not None else log_handle(spark, table))


# Table property: how many times the table was emptied in place by a full refresh.
GENERATION = "streaming.generation"

def snapshot(spark: SparkSession, table: str, log: Any = None) -> TableSnapshot:
    """The table as of now: one catalog lookup and a read of its Delta log, no Spark job. Its
    latest commit's checksum file says it all where there is one (the log handle is then opened
    only when asked for: `refreshed`); else Delta's log is read through its handle."""
    if log is None:
        location = catalog_location(spark, table)
        found = latest_from_checksum(spark, location) if location else None
        if found is not None:
            version, metadata = found
            return TableSnapshot(exists=True, version=version, properties=metadata.get("configuration") or {},
                                 table_id=str(metadata["id"]))
        log = log_handle(spark, table)
    if log is None:
        return TableSnapshot(exists=False)
    latest = current(spark, log)
    if latest.version() < 0:
        return TableSnapshot(exists=True, log=log)
    # The metadata action as JSON: one call, where walking the Java map costs two per property.
    metadata = json.loads(latest.metadata().json())["metaData"]
    return TableSnapshot(exists=True, version=int(latest.version()), log=log,
                         properties=metadata.get("configuration", {}), table_id=metadata["id"])


def log_folder_and_version(spark: SparkSession, location: str) -> tuple[str, int]:
    """The _delta_log folder of the table at `location` and its latest version (-1 before its
    first commit), by path: no catalog lookup."""
    log = at_path(spark, location)
    return log.logPath().toString(), int(current(spark, log).version())


def create_if_missing(
    spark: SparkSession,
    table: str,
    schema: StructType,
    partition_by: Sequence[str] = (),
    properties: Mapping[str, str] | None = None,
    exists: bool | None = None,
) -> bool:
    """Create the table before the stream starts, so partitioning and properties hold from version 0.
    True if it was created here. `exists`: already known by the caller, saves asking the catalog."""
    if exists if exists is not None else spark.catalog.tableExists(table):
        return False
    _clear_interrupted_create(spark, table)
    builder = DeltaTable.createIfNotExists(spark).tableName(table).addColumns(schema)
    if partition_by:
        builder = builder.partitionedBy(*partition_by)
    for key, value in (properties or {}).items():
        builder = builder.property(key, str(value))
    builder.execute()
    return True


def drop_if_exists(spark: SparkSession, table: str) -> None:
    spark.sql(f"drop table if exists {table}")


def empty(spark: SparkSession, table: str) -> None:
    """Every row removed in one commit; the table, its Delta identity and its history stay. Its
    generation goes up: what was written once per table (a backfill) is written again."""
    next_generation = generation(spark, table) + 1
    spark.sql(f"delete from {table}")
    spark.sql(f"alter table {table} set tblproperties ('{GENERATION}' = '{next_generation}')")


def generation(spark: SparkSession, table: str) -> int:
    """How many times the table was emptied in place (0 for a table as created)."""
    return int(snapshot(spark, table).properties.get(GENERATION, 0))


def current_version(spark: SparkSession, table: str) -> int:
    """The table's latest Delta version, -1 if it does not exist yet."""
    return snapshot(spark, table).version


def rows_written_since(
    spark: SparkSession, table: str, version: int, latest: int | None = None, log: Any = None
) -> int:
    """Rows the commits after `version` wrote (Delta's own numOutputRows per commit).

    Reads only those commits' files in the log, so the cost follows what this run wrote, not
    the table's age. `latest`: the table's version if the caller has just read it.
    """
    if latest is not None and latest <= version:
        return 0
    return rows_written(commits_since(spark, table, version, log))


def rows_written(commits: list[tuple[str, dict[str, str]]]) -> int:
    """Rows the commits (commits_since) wrote."""
    return sum(_rows_written(operation, metrics) for operation, metrics in commits)


def merged_rows(commits: list[tuple[str, dict[str, str]]]) -> dict[str, int]:
    """What the MERGEs among the commits (commits_since) did to the table's rows: inserted,
    updated, deleted."""
    merged = {"inserted": 0, "updated": 0, "deleted": 0}
    for operation, metrics in commits:
        if operation == "MERGE":
            for kind in merged:
                merged[kind] += int(metrics.get(f"numTargetRows{kind.capitalize()}", 0))
    return merged


def commits_since(
    spark: SparkSession, table: str, version: int, log: Any = None
) -> list[tuple[str, dict[str, str]]]:
    """(operation, operationMetrics) of each commit after `version`, read from the log's files."""
    log = log if log is not None else log_handle(spark, table)
    if log is None:
        return []
    return [(commit["operation"], commit.get("operationMetrics", {}))
            for commit in commit_infos_since(spark, log, version)]


def commit_infos_since(spark: SparkSession, log: Any, version: int) -> list[dict]:
    """The commitInfo of each commit after `version` in a DeltaLog, read from the log's files."""
    return [info for _, info in _versioned_commit_infos(spark, log, version)]


def version_with_user_metadata(spark: SparkSession, table: str, after: int, text: str) -> int | None:
    """The first version after `after` whose commit's userMetadata is `text`; None if none."""
    for version, info in _versioned_commit_infos(spark, log_handle(spark, table), after):
        if info.get("userMetadata") == text:
            return version
    return None


def _versioned_commit_infos(spark: SparkSession, log: Any, version: int):
    """(version, commitInfo) of each commit after `version`, read lazily from the log's files."""
    changes = log.getChanges(version + 1, jvm_class(spark, "scala.Option").empty(), False)
    while changes.hasNext():
        commit = changes.next()
        actions = commit._2()
        for index in range(actions.size()):
            action = actions.apply(index)
            if action.getClass().getSimpleName() == "CommitInfo":
                # As JSON, like the table's properties: one call for all of the commit's metrics.
                yield int(commit._1()), json.loads(action.json())["commitInfo"]


def log_handle(spark: SparkSession, table: str):
    """The table's DeltaLog (cached by Delta per location), as a handle for delta/log.py; None
    when the catalog has no such table."""
    session = spark._jsparkSession
    try:
        identifier = session.sessionState().sqlParser().parseTableIdentifier(table)
        return jvm_class(spark, "org.apache.spark.sql.delta.DeltaLog").forTable(session, identifier)
    except (PySparkException, Py4JJavaError) as error:
        if any(marker in str(error) for marker in _NOT_FOUND):
            return None
        raise


def _rows_written(operation: str, metrics: Mapping[str, str]) -> int:
    if operation == "OPTIMIZE":  # compaction (Delta's auto compaction too) moves rows, writes none
        return 0
    if operation == "MERGE":  # its numOutputRows also counts unchanged rows copied along
        return int(metrics.get("numTargetRowsInserted", 0)) + int(metrics.get("numTargetRowsUpdated", 0))
    return int(metrics.get("numOutputRows", 0))


def _clear_interrupted_create(spark: SparkSession, table: str) -> None:
    """Remove what a process killed while creating the table left at its location.

    Creating a managed Delta table writes its first commit, then registers the table in the
    metastore. A kill in between leaves a location that the next create refuses. If it holds
    nothing but that creation (no data was ever written), it is safe to start again.
    """
    location = default_location(spark, table)
    if not hadoop_fs.exists(spark, location):
        return
    if DeltaTable.isDeltaTable(spark, location):
        operations = {
            row["operation"] for row in DeltaTable.forPath(spark, location).history().collect()
        }
        leftover = operations == {"CREATE TABLE"}
    else:
        leftover = all(name == "_delta_log" or name.startswith((".", "_"))
                       for name in hadoop_fs.list_names(spark, location))
    if not leftover:
        raise StreamingModelError(
            f"Table {table} is not in the metastore, but its location {location} holds data. "
            f"Register it again (CREATE TABLE {table} USING DELTA LOCATION '{location}') "
            f"or move the folder away, then run again."
        )
    hadoop_fs.delete(spark, location)


def location(spark: SparkSession, table: str) -> str:
    """Where an existing table's files are, as its Delta log has it."""
    log = log_handle(spark, table)
    if log is None:
        raise StreamingModelError(f"Table {table} does not exist.")
    return log.dataPath().toString()


def default_location(spark: SparkSession, table: str) -> str:
    schema, name = table.replace("`", "").split(".")[-2:]
    return f"{spark.catalog.getDatabase(schema).locationUri.rstrip('/')}/{name}"


def catalog_location(spark: SparkSession, table: str) -> str | None:
    """Where the catalog says a table's files are (one metastore lookup, no Delta log read);
    None for a view, a table without a location or no such table."""
    session = spark._jsparkSession
    try:
        identifier = session.sessionState().sqlParser().parseTableIdentifier(table)
        found = session.sessionState().catalog().getTableMetadata(identifier)
    except (PySparkException, Py4JJavaError):
        return None
    if str(found.tableType().name()).upper() == "VIEW":
        return None
    location = found.storage().locationUri()
    return str(location.get()) if location.isDefined() else None
