"""A checkpoint's own logs, read as the files Spark writes: `offsets/<batch>` (what each batch
reads: a version line, the batch's metadata, then one line per source) and `commits/<batch>`
(written once the batch is in the sink, with the watermark the next batch runs with).

Read without a query: before one starts (lifecycle/up_to_date.py) or while none runs on the
checkpoint (sources/initial_snapshot.py).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Optional

from pyspark.sql import SparkSession

from dbt_spark_streaming.jvm import hadoop_fs

OFFSETS, COMMITS = "offsets", "commits"
VOID_OFFSET = "-"  # Spark's offset-log line for a source without an offset
COMPACT_SUFFIX = ".compact"  # a file source's log entry holding every batch up to its own


def folder(checkpoint: str, log: str) -> str:
    return f"{checkpoint.rstrip('/')}/{log}"


def last_batch(spark: SparkSession, checkpoint: str, log: str) -> Optional[int]:
    """The newest batch in the checkpoint's `log` (OFFSETS or COMMITS); None when it has none."""
    ids = [int(name) for name in hadoop_fs.list_names(spark, folder(checkpoint, log)) if name.isdigit()]
    return max(ids) if ids else None


def entry(spark: SparkSession, checkpoint: str, log: str, batch: int) -> list[str]:
    """The lines of one batch's entry in `log`."""
    return hadoop_fs.read_text(spark, f"{folder(checkpoint, log)}/{batch}").split("\n")


def offset(line: Optional[str]) -> Any:
    """A source's offset from its line (Delta's and the file source's are JSON objects); None
    for a source without one, or a line that is not JSON."""
    if line is None or line.strip() == VOID_OFFSET:
        return None
    try:
        return json.loads(line)
    except ValueError:
        return None


def files_seen(spark: SparkSession, checkpoint: str, source: int, through_batch: int) -> list[str]:
    """The files a file source (the checkpoint's `source`-th) has taken into batches up to
    `through_batch`, from its log under `sources/<source>`: the newest compaction at or before
    that batch (it holds every batch before it), then each batch after it."""
    log = _source_log(checkpoint, source)
    entries = _source_log_entries(spark, log)
    compacted = [batch for batch, name in entries.items() if name.endswith(COMPACT_SUFFIX) and batch <= through_batch]
    first = max(compacted, default=0)
    return [path for batch in range(first, through_batch + 1) if batch in entries
            for path in _paths_logged(spark, log, entries[batch])]


def newest_file_seen(spark: SparkSession, checkpoint: str, source: int) -> Optional[str]:
    """The last file a file source (the checkpoint's `source`-th) logged taking; None when its
    log under `sources/<source>` has none."""
    log = _source_log(checkpoint, source)
    entries = _source_log_entries(spark, log)
    for batch in sorted(entries, reverse=True):
        paths = _paths_logged(spark, log, entries[batch])
        if paths:
            return paths[-1]
    return None


def _source_log(checkpoint: str, source: int) -> str:
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
