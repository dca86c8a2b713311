"""Whether a checkpoint can go on reading the models it streams from: not when one of them had its
rows replaced (a redeploy's swap or a rollback) at a version the checkpoint has not read past."""

from __future__ import annotations

import json
from typing import Optional

from pyspark.sql import SparkSession

from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.jvm.checkpoint_log import OFFSETS, entry, last_batch, source_offsets

# The version whose commit replaced the table's rows: readers not past it are rebuilt.
REPLACED_AT = "streaming.replaced_at_version"


def upstream_replaced(spark: SparkSession, checkpoint: str, tables: tuple[str, ...]) -> Optional[str]:
    """Why a checkpoint cannot go on reading one of `tables` (a model's redeploy or rollback
    replaced its rows at a version the checkpoint has not read past); None if it can."""
    if not tables:
        return None
    positions = delta_positions(spark, checkpoint)
    for table in tables:
        upstream = delta_tables.snapshot(spark, table)
        replaced = int(upstream.properties.get(REPLACED_AT, -1))
        position = positions.get(upstream.table_id)
        if replaced < 0 or position is None:
            continue
        version, from_snapshot = position
        if version < replaced or (version == replaced and not from_snapshot):
            return f"{table}, which it streams from, had its rows replaced at version {replaced} by a redeploy or rollback"
    return None


def delta_positions(spark: SparkSession, checkpoint: str) -> dict[str, tuple[int, bool]]:
    """Where the checkpoint's latest planned batch leaves each Delta input, by the table's Delta
    id: (version, whether it is within the snapshot the stream started from)."""
    last = last_batch(spark, checkpoint, OFFSETS)
    if last is None:
        return {}
    return positions_in_offsets("\n".join(entry(spark, checkpoint, OFFSETS, last)))


def positions_in_offsets(text: str) -> dict[str, tuple[int, bool]]:
    """An offsets file's Delta source positions (after its version line and batch metadata)."""
    positions = {}
    for line in source_offsets(text.splitlines()).values():
        offset = json.loads(line) if line.strip().startswith("{") else None
        if isinstance(offset, dict) and "reservoirId" in offset:
            positions[offset["reservoirId"]] = (int(offset["reservoirVersion"]), bool(offset.get("isStartingVersion")))
    return positions
