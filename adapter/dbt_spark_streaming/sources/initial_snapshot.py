"""A checkpoint whose last batch read a Delta table's initial snapshot: moved past it, so that
the next start of the stream does not rebuild that snapshot.

A stream's first batches over a Delta table read the table as it was when the stream started
(Delta's "initial snapshot"). Every later start of the stream replays the last committed batch's
getBatch (Spark calls it on a V1 source before asking for new offsets), and when that batch began
inside the snapshot (no start offset, or one with isStartingVersion=true) Delta's source rebuilds
the whole snapshot to find it: it reconstructs the table's state, sorts every file and caches
the list (DeltaSource.getBatch -> getSnapshotAt -> DeltaSourceSnapshot.filteredFiles), only to
throw the result away. That repeats at every start until a batch with new input has been
committed after it, and costs as much as the table is large in files.

The remedy is the batch Spark would plan itself if the source had anything new: the same offsets
again, as batch N+1, written to the offset log (not to the commit log). The next start finds
batch N+1 planned and not committed, so it runs it: every source's start equals its end, which
Delta answers at once with an empty DataFrame (no snapshot), and Spark skips such sources when
it runs the batch. Batch N+1 then goes through Spark's own machinery like any batch with no new
rows: state stores move to their next version, the sink gets an empty batch, the commit log
records it. From then on the last committed batch starts and ends at the same offsets, and a
start replays it for free. No row is read twice or skipped: the offsets do not move.

The watermark written for batch N+1 is the one batch N committed (commits/N nextBatchWatermarkMs),
as Spark would write it, so an empty batch never moves event time back.

A query without state (no `state/` folder in its checkpoint: no aggregate, join or dedupe) gets
batch N+1 committed as well, as Spark would commit an empty batch: there is nothing it would
change (the sink's own record of written batches stays at N, and the next batch, N+2, is newer),
so the next start has no batch to run either. A stateful query runs it (its state stores move
from version N+1 to N+2 as for any batch; in complete mode the sink rewrites the aggregate once).
"""

from __future__ import annotations

import json
import time
from typing import Optional

from pyspark.sql import SparkSession

from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.jvm.checkpoint_log import (
    COMMITS,
    OFFSETS,
    VOID_OFFSET,
    entry,
    folder,
    last_batch,
    offset,
    record_shuffle_partitions,
    source_offsets,
)


def plan_batch_past_initial_snapshot(spark: SparkSession, checkpoint: str) -> bool:
    """After a stream stopped with its last batch committed: if that batch read a Delta source
    from its initial snapshot (or from its first offset), plan an empty batch after it (and
    commit it, for a query without state). True if one was planned. Call only while no query
    runs on this checkpoint."""
    last = last_batch(spark, checkpoint, OFFSETS)
    if last is None or last_batch(spark, checkpoint, COMMITS) != last:
        return False  # nothing ran, or the last batch is not committed: Spark replays it anyway
    end = entry(spark, checkpoint, OFFSETS, last)
    start = entry(spark, checkpoint, OFFSETS, last - 1) if last > 0 else None
    if not started_in_initial_snapshot(start, end):
        return False
    commit = entry(spark, checkpoint, COMMITS, last)
    hadoop_fs.write_atomically(spark, f"{folder(checkpoint, OFFSETS)}/{last + 1}", _next_entry(end, commit))
    record_shuffle_partitions(spark, checkpoint)  # a restart reads them for a batch not committed
    if not hadoop_fs.exists(spark, f"{checkpoint.rstrip('/')}/state"):
        hadoop_fs.write_atomically(spark, f"{folder(checkpoint, COMMITS)}/{last + 1}", "\n".join(commit))
    return True


def started_in_initial_snapshot(start: Optional[list[str]], end: list[str]) -> bool:
    """Whether a batch (offset-log entries: version, metadata, one line per source) read some
    Delta source from no offset or from an offset inside its initial snapshot."""
    end_offsets = source_offsets(end)
    start_offsets = source_offsets(start) if start else {}
    for key, after in end_offsets.items():
        after_offset = offset(after)
        if not isinstance(after_offset, dict) or "reservoirId" not in after_offset:
            continue  # not a Delta source
        before_offset = offset(start_offsets.get(key, VOID_OFFSET))
        if before_offset is None:
            return True
        if before_offset.get("isStartingVersion") and before_offset != after_offset:
            return True
    return False


def _next_entry(end: list[str], commit: list[str]) -> str:
    metadata = json.loads(end[1])
    committed = offset(commit[1]) if len(commit) > 1 else None
    if isinstance(committed, dict) and "nextBatchWatermarkMs" in committed:
        metadata["batchWatermarkMs"] = max(
            int(metadata.get("batchWatermarkMs", 0)), int(committed["nextBatchWatermarkMs"])
        )
    metadata["batchTimestampMs"] = int(time.time() * 1000)
    return "\n".join([end[0], json.dumps(metadata, separators=(",", ":")), *end[2:]])
