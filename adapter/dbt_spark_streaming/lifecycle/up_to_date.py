"""Whether a model's query has anything to do, decided before it starts and without a Spark job.

Starting a query that finds nothing new costs a run about half a second per model (the first
one in a process several seconds: the JVM loads the streaming and Delta code), all of it to plan
an empty trigger. So before it starts, the checkpoint's own logs (jvm/checkpoint_log.py)
are held against where each input is now:

- the last planned batch must be committed: one that is not runs again at the next start,
  unless it is an empty batch (its offsets those of the committed batch before it, as planned
  after an initial snapshot: sources/initial_snapshot.py) that moves no watermark: it waits, and
  runs first at the next start that has something to do;
- a stateful query whose last commit moved the watermark on runs one more batch without data,
  which emits the windows that closed and evicts the state that expired;
- a Delta input is read through the version after the last one the table has (Delta's offset
  after a whole version is `(version + 1, index -1)`), found by listing its `_delta_log`, and is
  still the table the stream read (its id, from its first commit, is the offset's);
- a file input has taken every file now under its folder into its log (`sources/<name>`, or
  `sources/<n>` in a checkpoint from before sources had names);
- any other input (Kafka, a rate source) may have news: its query starts.

Anything the check cannot read or does not recognise means the query starts, as before: a wrong
"nothing new" would leave rows waiting, so every doubt falls on the side of starting.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional, Sequence

from pyspark.sql import DataFrame, SparkSession

from dbt_spark_streaming.jvm import hadoop_fs, plans
from dbt_spark_streaming.delta import log as delta_log
from dbt_spark_streaming.jvm.plans import StreamingInput
from dbt_spark_streaming.jvm.checkpoint_log import (
    COMMITS, OFFSETS, entry, files_seen, input_key, last_batch, names_sources, offset, source_offsets,
)

DELTA_BASE_INDEX = -1  # Delta's offset index meaning "before the version's first file"
# In the checkpoint's folder (Spark reads only its own entries there): the last batch whose
# "up to date since" row the progress table has, so that idle runs after the first add no row.
RECORDED_MARKER = "up_to_date_recorded"


@dataclass(frozen=True)
class UpToDate:
    """A query with nothing to do: its last batch (committed), the inputs found unchanged since,
    and how long finding out took."""

    batch_id: int
    inputs: tuple[str, ...]
    seconds: float


def nothing_new(
    spark: SparkSession, checkpoint: str, frame: Optional[DataFrame] = None,
    inputs: Optional[Sequence[StreamingInput]] = None,
) -> Optional[UpToDate]:
    """UpToDate when the query that `frame` starts from `checkpoint` (or one whose plan reads
    `inputs`, in order) would run no batch now; None when it may have one to run (or this cannot
    be told without starting it)."""
    started = time.perf_counter()
    last = last_batch(spark, checkpoint, OFFSETS)
    if last is None:
        return None
    committed_last = last_batch(spark, checkpoint, COMMITS)
    if committed_last != last:
        if committed_last != last - 1 or not _empty_batch(spark, checkpoint, last):
            return None
        last = committed_last
    planned, committed = entry(spark, checkpoint, OFFSETS, last), entry(spark, checkpoint, COMMITS, last)
    if _watermark_moved(planned, committed) and hadoop_fs.list_names(spark, f"{checkpoint.rstrip('/')}/state"):
        return None
    if inputs is None:
        inputs = plans.streaming_inputs(frame)
    offsets, named = source_offsets(planned), names_sources(planned)
    # Named, a source the query no longer reads is left behind; one it reads now that the
    # checkpoint has no offset for (a source added) has all its input still to read.
    keys = [input_key(position, found.name, named) for position, found in enumerate(inputs)]
    if not inputs or any(key not in offsets for key in keys) or (not named and len(keys) != len(offsets)):
        return None
    for key, found in zip(keys, inputs):
        if not _unchanged(spark, checkpoint, key, found, offset(offsets[key])):
            return None
    return UpToDate(last, tuple(found.path or found.format for found in inputs),
                    round(time.perf_counter() - started, 4))


def _empty_batch(spark: SparkSession, checkpoint: str, batch_id: int) -> bool:
    """Whether planned batch `batch_id` reads nothing: every source's offset is the one the batch
    before it ended at. Whether it would move the watermark on is the committed batch's to say
    (its nextBatchWatermarkMs), checked after as for any committed batch."""
    planned, before = entry(spark, checkpoint, OFFSETS, batch_id), entry(spark, checkpoint, OFFSETS, batch_id - 1)
    return len(planned) > 2 and source_offsets(planned) == source_offsets(before)


def batch_due_without_data(spark: SparkSession, checkpoint: str) -> bool:
    """Whether a stateful query's last commit moved its watermark on: its next start runs a batch
    without data, which emits the windows that closed and evicts expired state."""
    last = last_batch(spark, checkpoint, COMMITS)
    if last is None or last_batch(spark, checkpoint, OFFSETS) != last:
        return False
    planned, committed = entry(spark, checkpoint, OFFSETS, last), entry(spark, checkpoint, COMMITS, last)
    return _watermark_moved(planned, committed) and bool(
        hadoop_fs.list_names(spark, f"{checkpoint.rstrip('/')}/state"))


def _watermark_moved(planned: Sequence[str], committed: Sequence[str]) -> bool:
    metadata = offset(planned[1]) if len(planned) > 1 else None
    commit = offset(committed[1]) if len(committed) > 1 else None
    if not isinstance(metadata, dict) or not isinstance(commit, dict):
        return True
    return int(commit.get("nextBatchWatermarkMs", 0)) > int(metadata.get("batchWatermarkMs", 0))


def _unchanged(spark: SparkSession, checkpoint: str, key: str, found: StreamingInput, position) -> bool:
    if not isinstance(position, dict) or found.path is None or _is_glob(found.path):
        return False
    if found.format == "delta":
        return _delta_unchanged(spark, found.path, position)
    if "logOffset" in position:  # a file source
        seen = {hadoop_fs.file_key(path)
                for path in files_seen(spark, checkpoint, key, int(position["logOffset"]))}
        return all(hadoop_fs.file_key(path) in seen for path in hadoop_fs.files_under(spark, found.path))
    return False


def _delta_unchanged(spark: SparkSession, path: str, position: dict) -> bool:
    if "reservoirVersion" not in position or position.get("isStartingVersion", True):
        return False
    if int(position.get("index", DELTA_BASE_INDEX)) != DELTA_BASE_INDEX:
        return False  # inside a version: the rest of its files may be still to read
    latest = delta_log.version_listed(spark, path)
    if latest < 0 or latest >= int(position["reservoirVersion"]):
        return False  # gone, or a version the stream has not read: the usual case when served
    # The same table, not one made again under the path (or another input's line). Once the log's
    # first commit is trimmed, its id comes from the table's state: only asked when it matters.
    return delta_log.table_id(spark, path) == position.get("reservoirId")


def _is_glob(path: str) -> bool:
    return any(character in path for character in "*?[{")


def already_recorded(spark: SparkSession, checkpoint: str, batch_id: int) -> bool:
    """Whether the progress table already says the query is up to date since `batch_id`."""
    marker = f"{checkpoint.rstrip('/')}/{RECORDED_MARKER}"
    return hadoop_fs.exists(spark, marker) and hadoop_fs.read_text(spark, marker).strip() == str(batch_id)


def mark_recorded(spark: SparkSession, checkpoint: str, batch_id: int) -> None:
    hadoop_fs.write_text(spark, f"{checkpoint.rstrip('/')}/{RECORDED_MARKER}", str(batch_id))
