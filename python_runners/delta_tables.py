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
