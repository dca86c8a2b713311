"""A checkpoint's own logs, read as the files Spark writes: `offsets/<batch>` (what each batch
reads: a version line, the batch's metadata, then one line per source) and `commits/<batch>`
(written once the batch is in the sink, with the watermark the next batch runs with).

Read without a query: before one starts (lifecycle/up_to_date.py) or while none runs on the
checkpoint (sources/initial_snapshot.py).
"""

from __future__ import annotations

import json
from typing import Any, Optional

from pyspark.sql import SparkSession

from dbt_spark_streaming.jvm import hadoop_fs

OFFSETS, COMMITS = "offsets", "commits"
VOID_OFFSET = "-"  # Spark's offset-log line for a source without an offset


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
    log = f"{checkpoint.rstrip('/')}/sources/{source}"
    names = hadoop_fs.list_names(spark, log)
    compacted = [int(name.split(".")[0]) for name in names
                 if name.endswith(".compact") and name.split(".")[0].isdigit()]
    start = max((batch for batch in compacted if batch <= through_batch), default=None)
    entries = [f"{start}.compact"] if start is not None else []
    plain = {int(name) for name in names if name.isdigit()}
    first = start + 1 if start is not None else 0
    entries += [str(batch) for batch in range(first, through_batch + 1) if batch in plain]
    seen = []
    for name in entries:
        for line in hadoop_fs.read_text(spark, f"{log}/{name}").split("\n")[1:]:
            if line.strip():
                seen.append(json.loads(line)["path"])
    return seen


def newest_file_seen(spark: SparkSession, checkpoint: str, source: int) -> Optional[str]:
    """The last file a file source (the checkpoint's `source`-th) logged taking; None when its
    log under `sources/<source>` has none."""
    log = f"{checkpoint.rstrip('/')}/sources/{source}"
    batches = {int(name.split(".")[0]): name for name in hadoop_fs.list_names(spark, log)
               if name.split(".")[0].isdigit() and name.count(".") <= 1}
    for batch in sorted(batches, reverse=True):
        lines = [line for line in hadoop_fs.read_text(spark, f"{log}/{batches[batch]}").split("\n")[1:] if line.strip()]
        if lines:
            return str(json.loads(lines[-1])["path"])
    return None
