"""A checkpoint's own logs, read as the files Spark writes: `offsets/<batch>` (what each batch
reads: a version line, the batch's metadata, then one line per source) and `commits/<batch>`
(written once the batch is in the sink, with the watermark the next batch runs with).

An offsets entry of version 1 (`v1`) has one offset line per source, in the order Spark numbers
the query's sources, whose own logs are `sources/0`, `sources/1`, ... Version 2 (`v2`, written
when the sources are named, as this project names them) has a line `<name>:<offset>` per
source and keeps each source's log in `sources/<name>`: a source can be added or removed
without moving the others. `source_offsets` reads either, keyed by the source's key (its
name, or its position as text), and `input_key` gives a query input's key.

Read without a query: before one starts (lifecycle/up_to_date.py) or while none runs on the
checkpoint (sources/initial_snapshot.py).
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Optional, Sequence

from pyspark.sql import SparkSession

from dbt_spark_streaming.jvm import hadoop_fs

OFFSETS, COMMITS = "offsets", "commits"
NAMED_VERSION = "v2"  # the offset log's version that keys sources by name
# Spark's settings for it: every source named, and new checkpoints keyed by name.
SOURCE_NAMING = "spark.sql.streaming.queryEvolution.enableSourceEvolution"
OFFSET_LOG_VERSION = "spark.sql.streaming.offsetLog.formatVersion"
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
VOID_OFFSET = "-"  # Spark's offset-log line for a source without an offset
COMPACT_SUFFIX = ".compact"  # a file source's log entry holding every batch up to its own


def folder(checkpoint: str, log: str) -> str:
    return f"{checkpoint.rstrip('/')}/{log}"


def last_batch(spark: SparkSession, checkpoint: str, log: str) -> Optional[int]:
    """The newest batch in the checkpoint's `log` (OFFSETS or COMMITS); None when it has none."""
    ids = [int(name) for name in hadoop_fs.list_names(spark, folder(checkpoint, log)) if name.isdigit()]
    return max(ids) if ids else None


# An entry Spark was writing when its process died. It writes each one under such a name, then
# renames it into place (CheckpointFileManager.createAtomic); on an object store the rename is a
# copy made after the whole upload, and a kill between the two leaves the temporary file alone.
_UNFINISHED_ENTRY = re.compile(r"^\.\d+\.[0-9a-f-]+\.tmp(\.crc)?$")


def clear_unfinished_first_entry(spark: SparkSession, checkpoint: str) -> list[str]:
    """Delete what a process killed while writing the first batch's entry left in the offsets
    log, when that log has no entry: Spark starts batch 0 only on an empty folder (else
    STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY), so the query would never start again. Call it
    only while this process holds the checkpoint's model (its lock). The names deleted."""
    offsets = folder(checkpoint, OFFSETS)
    names = hadoop_fs.list_names(spark, offsets)
    if any(name.isdigit() for name in names):
        return []
    unfinished = [name for name in names if _UNFINISHED_ENTRY.match(name)]
    hadoop_fs.delete_names(spark, offsets, unfinished)
    return unfinished


def entry(spark: SparkSession, checkpoint: str, log: str, batch: int) -> list[str]:
    """The lines of one batch's entry in `log`."""
    return hadoop_fs.read_text(spark, f"{folder(checkpoint, log)}/{batch}").split("\n")


def names_sources(lines: Sequence[str]) -> bool:
    """Whether an offsets entry (its lines) keys its sources by name (version 2)."""
    return bool(lines) and lines[0].strip() == NAMED_VERSION


def source_offsets(lines: Sequence[str]) -> dict[str, str]:
    """An offsets entry's offset of each source as written, by the source's key: its name in
    version 2, its position ("0", "1", ...) in version 1."""
    body = [line for line in lines[2:] if line.strip()]
    if names_sources(lines):
        return dict(line.split(":", 1) for line in body if ":" in line)
    return {str(position): line for position, line in enumerate(body)}


def input_key(position: int, name: Optional[str], named: bool) -> str:
    """The key of a query's input (the `position`-th, named `name`) in a checkpoint whose
    entries are `named` (version 2) or not."""
    return name if named and name else str(position)


def offset(line: Optional[str]) -> Any:
    """A source's offset from its line (Delta's and the file source's are JSON objects); None
    for a source without one, or a line that is not JSON."""
    if line is None or line.strip() == VOID_OFFSET:
        return None
    try:
        return json.loads(line)
    except ValueError:
        return None


def files_seen(spark: SparkSession, checkpoint: str, source: str, through_batch: int) -> list[str]:
    """The files a file source (the checkpoint's source with key `source`) has taken into batches up to
    `through_batch`, from its log under `sources/<source>`: the newest compaction at or before
    that batch (it holds every batch before it), then each batch after it."""
    log = _source_log(checkpoint, source)
    entries = _source_log_entries(spark, log)
    compacted = [batch for batch, name in entries.items() if name.endswith(COMPACT_SUFFIX) and batch <= through_batch]
    first = max(compacted, default=0)
    return [path for batch in range(first, through_batch + 1) if batch in entries
            for path in _paths_logged(spark, log, entries[batch])]


def newest_file_seen(spark: SparkSession, checkpoint: str, source: str) -> Optional[str]:
    """The last file a file source (the checkpoint's source with key `source`) logged taking; None when its
    log under `sources/<source>` has none."""
    log = _source_log(checkpoint, source)
    entries = _source_log_entries(spark, log)
    for batch in sorted(entries, reverse=True):
        paths = _paths_logged(spark, log, entries[batch])
        if paths:
            return paths[-1]
    return None


def _source_log(checkpoint: str, source: str) -> str:
    return f"{checkpoint.rstrip('/')}/sources/{source}"


def _source_log_entries(spark: SparkSession, log: str) -> dict[int, str]:
    return source_log_by_batch(hadoop_fs.list_names(spark, log))


def source_log_by_batch(names: Iterable[str]) -> dict[int, str]:
    """A file source's log from its folder's file names, by batch: `<batch>`, or
    `<batch>.compact` holding every batch up to it (Hadoop's `.crc` files and others left out)."""
    entries = {}
    for name in names:
        batch, dot, suffix = name.partition(".")
        if batch.isdigit() and (not dot or dot + suffix == COMPACT_SUFFIX):
            entries[int(batch)] = name
    return entries


def _paths_logged(spark: SparkSession, log: str, name: str) -> list[str]:
    """The files one entry of a file source's log lists (its first line is the log's version)."""
    lines = hadoop_fs.read_text(spark, f"{log}/{name}").split("\n")[1:]
    return [str(json.loads(line)["path"]) for line in lines if line.strip()]


def record_shuffle_partitions(spark: SparkSession, checkpoint: str) -> int:
    """Write the checkpoint's shuffle partitions into each named offsets entry without them;
    how many entries were rewritten.

    Spark 4.2 writes a new checkpoint's named entries (OffsetSeqMetadataV2) without
    `spark.sql.shuffle.partitions`, which version 1 entries record and a restart reads back, and
    each later entry copies the first's settings. Without it a restart takes the session's
    partitions instead of those the state was written with (a stateful model's groups spread
    over other partitions), and a restart whose last batch was planned but not committed fails
    with `NoSuchElementException: None.get` (its check for an unfinished state repartition reads
    the setting). The number recorded is the state's own (its partition folders under
    `state/0`), or the session's for a query without state."""
    entries = folder(checkpoint, OFFSETS)
    partitions = None
    rewritten = 0
    # Newest first, to the first entry that has them: those before it were done before (or are
    # version 1's, which have them), so a checkpoint done before costs one entry's read.
    for batch in sorted((int(found) for found in hadoop_fs.list_names(spark, entries) if found.isdigit()),
                        reverse=True):
        lines = entry(spark, checkpoint, OFFSETS, batch)
        metadata = entry_metadata(lines)
        if not names_sources(lines) or SHUFFLE_PARTITIONS in metadata.get("conf", {}):
            break
        if partitions is None:
            partitions = _state_partitions(spark, checkpoint) or int(spark.conf.get(SHUFFLE_PARTITIONS))
        metadata.setdefault("conf", {})[SHUFFLE_PARTITIONS] = str(partitions)
        text = "\n".join([lines[0], json.dumps(metadata, separators=(",", ":")), *lines[2:]])
        hadoop_fs.write_atomically(spark, f"{entries}/{batch}", text, replace=True)
        rewritten += 1
    return rewritten


def _state_partitions(spark: SparkSession, checkpoint: str) -> int:
    operator = f"{checkpoint.rstrip('/')}/state/0"
    return sum(1 for name in hadoop_fs.list_names(spark, operator) if name.isdigit())


def entry_metadata(lines: Sequence[str]) -> dict:
    """An offsets entry's batch metadata (its second line); {} when it has none."""
    try:
        return json.loads(lines[1]) if len(lines) > 1 and lines[1].strip() else {}
    except ValueError:
        return {}
