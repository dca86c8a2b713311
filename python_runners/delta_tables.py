"""The Delta tables streaming models write to."""

from __future__ import annotations

from typing import Mapping, Sequence

from delta.tables import DeltaTable
from pyspark.sql import SparkSession
from pyspark.sql.types import StructType

from python_runners import hadoop_fs
from python_runners.streaming_errors import StreamingModelError


def create_if_missing(
    spark: SparkSession,
    table: str,
    schema: StructType,
    partition_by: Sequence[str] = (),
    properties: Mapping[str, str] | None = None,
) -> bool:
    """Create the table before the stream starts, so partitioning and properties hold from version 0.
    True if it was created here."""
    if spark.catalog.tableExists(table):
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


def current_version(spark: SparkSession, table: str) -> int:
    """The table's latest Delta version, -1 if it does not exist yet."""
    if not spark.catalog.tableExists(table):
        return -1
    return DeltaTable.forName(spark, table).history(1).first()["version"]


def rows_written_since(spark: SparkSession, table: str, version: int) -> int:
    """Rows the commits after `version` wrote (Delta's own numOutputRows per commit).

    Reads only those commits, so the cost follows what this run wrote, not the table's age.
    """
    new_commits = current_version(spark, table) - version
    if new_commits <= 0:
        return 0
    commits = DeltaTable.forName(spark, table).history(new_commits).where(f"version > {version}")
    return sum(
        _rows_written(row["operation"], row["operationMetrics"] or {})
        for row in commits.select("operation", "operationMetrics").collect()
    )


def _rows_written(operation: str, metrics: Mapping[str, str]) -> int:
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


def default_location(spark: SparkSession, table: str) -> str:
    schema, name = table.replace("`", "").split(".")[-2:]
    return f"{spark.catalog.getDatabase(schema).locationUri.rstrip('/')}/{name}"
