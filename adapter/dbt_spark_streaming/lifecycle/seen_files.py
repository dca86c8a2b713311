"""A file source's memory of the files it took, kept to the files it can still meet.

Spark's file source logs every file it takes under its checkpoint's `sources/<name>`, and at every
tenth batch compacts that log into one file holding every entry since the query began. Each
query start reads the newest compaction whole, each compaction rewrites it, and
lifecycle/up_to_date.py reads it to find what is new. A served model starts a query at every
run: a source taking a file every half second held 7,186 entries after an hour and made each run
start later (docs/BENCHMARKS.md section 7), and after a day it would hold 172,800.

An entry is needed while Spark can list its file again: a listed file that the log holds is
skipped. A file moved away or deleted (a source's archive_to or delete_processed) is never
listed again, so its entry only costs. trim() rewrites the newest compaction without the entries
whose file is gone, but keeps those of the last `KEPT_BATCHES` batches (a batch not yet committed
is replayed from its entries) and the newest file's (Spark's maxFileAge counts from it); a
landing folder that is missing itself (an unmounted share) forgets nothing. A file
landing again under a name that was taken before is then a new file, read once more, where
Spark alone would skip it for seven days.

Only while no query runs on the checkpoint: the model's maintenance, which never runs beside its
own run (serve/upkeep.py), or the maintain command under the run lock. Only on a local disk: the
new content is written beside the file and renamed over it, atomic there. Hadoop's checksum of
the old content is deleted first: Hadoop reads a file without one unchecked, and the old one
would fail the new content. A kill at any point leaves one whole file, old or new.
"""

from __future__ import annotations

import json
import os
from typing import Optional

from dbt_spark_streaming.jvm.checkpoint_log import COMPACT_SUFFIX, source_log_by_batch
from dbt_spark_streaming.jvm.hadoop_fs import local_path

KEPT_BATCHES = 20
# Fewer entries to drop than this: not worth rewriting the file.
MIN_DROPPED = 100


def trim(checkpoint: Optional[str]) -> int:
    """Entries dropped from the logs of the checkpoint's file sources (0 where it is not on a
    local disk, or has none)."""
    root = local_path(checkpoint) if checkpoint else None
    sources = os.path.join(root, "sources") if root else None
    if not sources or not os.path.isdir(sources):
        return 0
    return sum(_trim_log(os.path.join(sources, name)) for name in sorted(os.listdir(sources))
               if os.path.isdir(os.path.join(sources, name)))


def _trim_log(log: str) -> int:
    batches = source_log_by_batch(os.listdir(log))
    compacted = [batch for batch, name in batches.items() if name.endswith(COMPACT_SUFFIX)]
    if not compacted:
        return 0
    name = batches[max(compacted)]
    with open(os.path.join(log, name), encoding="utf-8") as file:
        version, *lines = file.read().split("\n")
    lines = [line for line in lines if line.strip()]
    entries = _file_entries(lines)
    if entries is None or not entries:
        return 0  # not a file source's log (a Kafka source keeps its first offsets here)
    recent = max(batches) - KEPT_BATCHES
    newest = max(entry["timestamp"] for entry in entries)
    listings: dict[str, Optional[frozenset]] = {}
    kept = [line for line, entry in zip(lines, entries)
            if entry["batchId"] > recent or entry["timestamp"] == newest
            or _still_there(entry["path"], listings)]
    dropped = len(lines) - len(kept)
    if dropped < MIN_DROPPED:
        return 0
    _replace(log, name, "\n".join([version, *kept]))
    return dropped


def _file_entries(lines: list[str]) -> Optional[list[dict]]:
    try:
        entries = [json.loads(line) for line in lines]
    except ValueError:
        return None
    if not all(isinstance(entry, dict) and {"path", "timestamp", "batchId"} <= entry.keys() for entry in entries):
        return None
    return entries


def _still_there(uri: str, listings: dict[str, Optional[frozenset]]) -> bool:
    """Whether the file may be listed again. Kept when it is not a local path, or its folder is
    missing: an unmounted landing folder has not lost its files, which would be read again.
    `listings` keeps each folder's names, listed once per trim (None for a missing folder)."""
    path = local_path(uri)
    if path is None:
        return True
    folder, name = os.path.split(path)
    if folder not in listings:
        listings[folder] = frozenset(os.listdir(folder)) if os.path.isdir(folder) else None
    names = listings[folder]
    return names is None or name in names


def _replace(log: str, name: str, text: str) -> None:
    written = os.path.join(log, f".{name}.trimmed")
    with open(written, "w", encoding="utf-8") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    checksum = os.path.join(log, f".{name}.crc")
    if os.path.exists(checksum):
        os.remove(checksum)
    os.replace(written, os.path.join(log, name))
