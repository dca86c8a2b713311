"""`<table>__tombstones`: the deletes a cdc_table has applied, kept beside it so that a change
arriving late, older than a delete, is placed correctly.

scd1 keeps the latest delete per key: an older change is dropped instead of bringing the row
back. scd2 keeps every delete: one that ends no version (the key was already deleted, or never
inserted) is not visible in the history, yet a late insert before it must end there. A truncate
is kept as a row with null keys. Tombstones older than tombstone_retention are collected by the
batches that write new ones; a change older than a collected tombstone is applied as if the
delete had not happened.
"""

from __future__ import annotations

from delta.tables import DeltaTable
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from python_runners.runtime.writes.change_rows import DELETE, SEQ, TRUNCATE, FeedShape

DELETED_AT = "__deleted_at"


def tombstones(spark, shape: FeedShape, table: str) -> DataFrame:
    """The key deletes remembered (not truncates)."""
    return spark.table(shape.changes.tombstones_table(table)).filter(~F.col(TRUNCATE))


def remember_deletes(rows: DataFrame, shape: FeedShape, table: str, batch_truncate=None) -> None:
    """The batch's deletes (and truncate) merged into the tombstones, under the batch's
    transaction id like the table's own MERGE, which commits before this one."""
    session = rows.sparkSession
    keys = list(shape.changes.keys)
    every_delete = shape.changes.stored_as == "scd2"
    deletes = rows.filter(F.col(DELETE) & ~F.col(TRUNCATE))
    deletes = (
        deletes.select(*keys, SEQ) if every_delete
        else deletes.groupBy(*keys).agg(F.max(SEQ).alias(SEQ))
    ).withColumn(TRUNCATE, F.lit(False))
    if batch_truncate is not None:
        marker = session.range(1).select(
            *[F.lit(None).cast(deletes.schema[key].dataType).alias(key) for key in keys],
            F.lit(batch_truncate).cast(deletes.schema[SEQ].dataType).alias(SEQ),
            F.lit(True).alias(TRUNCATE),
        )
        deletes = deletes.unionByName(marker)
    if deletes.isEmpty():
        return
    deletes = deletes.withColumn(DELETED_AT, F.current_timestamp())
    expired = F.col(f"target.{DELETED_AT}") < F.current_timestamp() - F.expr(
        f"interval {shape.changes.tombstone_retention}"
    )
    # The truncate marker has null keys: matched null-safely, and only with the marker.
    condition = F.col(f"target.{TRUNCATE}") == F.col(f"batch.{TRUNCATE}")
    for key in keys:
        condition = condition & F.col(f"target.`{key}`").eqNullSafe(F.col(f"batch.`{key}`"))
    if every_delete:
        condition = condition & (F.col(f"target.{SEQ}") == F.col(f"batch.{SEQ}"))
    (
        DeltaTable.forName(session, shape.changes.tombstones_table(table)).alias("target")
        .merge(deletes.alias("batch"), condition)
        .whenMatchedUpdate(
            condition=F.col(f"batch.{SEQ}") > F.col(f"target.{SEQ}"),
            set={SEQ: F.col(f"batch.{SEQ}"), DELETED_AT: F.col(f"batch.{DELETED_AT}")},
        )
        .whenNotMatchedInsertAll()
        .whenNotMatchedBySourceDelete(condition=expired)
        .execute()
    )
