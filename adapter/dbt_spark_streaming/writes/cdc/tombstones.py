"""`<table>__tombstones`: the deletes a cdc_table has applied, kept beside it so that a change
arriving late, older than a delete, is placed correctly.

scd1 reads the latest delete per key: an older change is dropped instead of bringing the row
back. scd2 reads every delete: one that ends no version (the key was already deleted, or never
inserted) is not visible in the history, yet a late insert before it must end there. A truncate
is kept as a row with null keys. Tombstones older than tombstone_retention are collected every
COLLECT_EVERY batches; a change older than a collected tombstone is applied as if the delete
had not happened.
"""

from __future__ import annotations

from delta.tables import DeltaTable
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from dbt_spark_streaming.writes.cdc.change_rows import DELETE, SEQ, TRUNCATE, ChangeBatch, FeedShape, literal

DELETED_AT = "__deleted_at"
COLLECT_EVERY = 20  # batches


def tombstones(spark, shape: FeedShape, table: str) -> DataFrame:
    """The key deletes remembered (not truncates), each (key, sequence) once."""
    return (
        spark.table(shape.changes.tombstones_table(table)).filter(~F.col(TRUNCATE))
        .select(*shape.changes.keys, SEQ).distinct()
    )


def remember_deletes(batch: ChangeBatch, shape: FeedShape, table: str, app_id: str, batch_id: int) -> None:
    """The batch's deletes (and truncate) added to the tombstones, under the batch's transaction
    id like the table's own MERGE, which commits before this. Mostly a plain append; every
    COLLECT_EVERY batches a MERGE that also drops the expired ones (a MERGE that can delete
    reads and rewrites the whole table: ~1 s a batch, bench/cdc/)."""
    collecting = batch_id % COLLECT_EVERY == 0
    if not collecting and batch.deletes == 0 and batch.truncated_at is None:
        return
    session = batch.rows.sparkSession
    keys = list(shape.changes.keys)
    deletes = batch.rows.filter(F.col(DELETE) & ~F.col(TRUNCATE))
    deletes = (
        deletes.select(*keys, SEQ) if shape.changes.stored_as == "scd2"
        else deletes.groupBy(*keys).agg(F.max(SEQ).alias(SEQ))
    ).withColumn(TRUNCATE, F.lit(False))
    if batch.truncated_at is not None:
        marker = session.range(1).select(
            *[F.lit(None).cast(deletes.schema[key].dataType).alias(key) for key in keys],
            literal(batch.truncated_at).cast(deletes.schema[SEQ].dataType).alias(SEQ),
            F.lit(True).alias(TRUNCATE),
        )
        deletes = deletes.unionByName(marker)
    deletes = deletes.withColumn(DELETED_AT, F.current_timestamp())
    if not collecting:
        (deletes.write.format("delta").mode("append")
         .option("txnAppId", app_id).option("txnVersion", batch_id)
         .saveAsTable(shape.changes.tombstones_table(table)))
        return
    expired = F.col(f"target.{DELETED_AT}") < F.current_timestamp() - F.expr(
        f"interval {shape.changes.tombstone_retention}"
    )
    # The truncate marker has null keys: matched null-safely.
    same = F.col(f"target.{TRUNCATE}") == F.col(f"batch.{TRUNCATE}")
    for column in (*keys, SEQ):
        same = same & F.col(f"target.`{column}`").eqNullSafe(F.col(f"batch.`{column}`"))
    (
        DeltaTable.forName(session, shape.changes.tombstones_table(table)).alias("target")
        .merge(deletes.alias("batch"), same)
        .whenNotMatchedInsertAll()
        .whenNotMatchedBySourceDelete(condition=expired)
        .execute()
    )
