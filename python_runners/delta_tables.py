"""The Delta tables streaming models write to."""

from __future__ import annotations

from typing import Mapping, Sequence

from delta.tables import DeltaTable
from pyspark.sql import SparkSession
from pyspark.sql.types import StructType


def create_if_missing(
    spark: SparkSession,
    table: str,
    schema: StructType,
    partition_by: Sequence[str] = (),
    properties: Mapping[str, str] | None = None,
) -> None:
    """Create the table before the stream starts, so partitioning and properties hold from version 0."""
    if spark.catalog.tableExists(table):
        return
    builder = DeltaTable.createIfNotExists(spark).tableName(table).addColumns(schema)
    if partition_by:
        builder = builder.partitionedBy(*partition_by)
    for key, value in (properties or {}).items():
        builder = builder.property(key, str(value))
    builder.execute()


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
        int((row["operationMetrics"] or {}).get("numOutputRows", 0))
        for row in commits.select("operationMetrics").collect()
    )
