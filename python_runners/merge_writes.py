"""output_mode 'update': each micro-batch's changed rows MERGEd into the Delta table by unique_key.

Spark's update mode emits, per batch, only the aggregate rows that changed; merging them keeps
the table equal to what complete mode would write. Delta rewrites the data files that hold a
changed key, so this wins over complete mode when a batch's changes sit in few files. Each MERGE
carries the batch's Delta transaction id, so a batch replayed after a crash changes nothing.
"""

from __future__ import annotations

from functools import partial
from typing import Sequence

from pyspark.sql import DataFrame

from python_runners.idempotent_batches import delta_transaction, once_per_batch


def merge_batch(
    batch: DataFrame, batch_id: int, app_id: str, table: str, unique_key: Sequence[str]
) -> None:
    session = batch.sparkSession
    view = f"{table.replace('.', '__').replace('`', '')}__batch_{batch_id}"
    batch.createOrReplaceTempView(view)
    matches = " and ".join(f"target.`{key}` <=> batch.`{key}`" for key in unique_key)
    try:
        with delta_transaction(session, app_id, batch_id):
            session.sql(
                f"merge into {table} as target using {view} as batch on {matches} "
                "when matched then update set * when not matched then insert *"
            )
    finally:
        session.catalog.dropTempView(view)


def merge_writer(checkpoint: str, table: str, unique_key: Sequence[str]):
    """The foreachBatch function for a model in update mode."""
    return once_per_batch(checkpoint, partial(merge_batch, table=table, unique_key=tuple(unique_key)))
