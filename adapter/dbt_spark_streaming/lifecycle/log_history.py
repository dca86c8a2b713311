"""A table's Delta log kept short: the history older than the model's `log_retention` removed, as
far back as nothing needs it.

Delta reads a table's state from its latest checkpoint and the commits after it, but on local
and HDFS storage it lists the whole `_delta_log` folder to find them, at every snapshot update:
several times a batch. A table that commits every few seconds gained four files a commit (the
commit, Delta's checksum and Hadoop's `.crc` of each, which session.py now turns off), so each
batch got slower the longer the service ran (docs/BENCHMARKS.md section 7: 3,205 files after
an hour, 75 ms a listing). Delta's own clean-up removes only what is older than
`delta.logRetentionDuration` *and* than the last midnight, and knows nothing of a stream that
has not read a version yet.

Here the log is cut at a checkpoint: every file of the versions before the newest checkpoint
that is older than `log_retention`, and not newer than the first version a streaming reader of the
table has not read (`Reader`, maintenance.py), is deleted, oldest first. Every version from that
checkpoint on stays readable; a reader resumes from its version; a kill part-way leaves older
files that the next pass deletes. The rollback guard (maintenance.rollback_hold) skips the whole
pass, as it skips VACUUM, while a rollback may still need the version before a redeploy.
"""

from __future__ import annotations

import re
import time
from typing import Callable, Optional

from pyspark.sql import SparkSession

from dbt_spark_streaming.jvm import hadoop_fs

# 00000000000000000760.json, .00000000000000000760.json.crc, 00000000000000000760.crc,
# 00000000000000000760.checkpoint.parquet, and a log compaction's 000...10.000...19.compacted.json
_VERSIONED = re.compile(r"^\.?(\d{20})\.(?:(\d{20})\.compacted\.json|json|crc|checkpoint\.parquet)(?:\.crc)?$")
_STALE_CHECKSUM = "._last_checkpoint.crc"
_CHECKPOINT = re.compile(r"^(\d{20})\.checkpoint\.parquet$")


def trim(spark: SparkSession, location: str, keep_seconds: float, first_unread: Optional[int],
         commit_time: Callable[[int], Optional[float]], now: Optional[float] = None) -> int:
    """Delete the log's files before the newest checkpoint committed more than `keep_seconds`
    ago and at or before `first_unread` (the slowest reader's first unread version; None: no
    reader); the number of files deleted."""
    log = f"{location.rstrip('/')}/_delta_log"
    names = hadoop_fs.list_names(spark, log)
    cut = cut_version(names, keep_seconds, first_unread, commit_time, now or time.time())
    if cut is None:
        return 0
    doomed = doomed_names(names, cut)
    hadoop_fs.delete_names(spark, log, doomed)
    return len(doomed)


def doomed_names(names: list[str], cut: int) -> list[str]:
    """The log's files of versions before `cut`, oldest first, and a stale checksum of
    `_last_checkpoint`: rewritten without Hadoop's checksums since (session.py), a reader that
    still checks them would find it wrong."""
    doomed = sorted((version, name) for name in names
                    for version in [_last_version(name)] if version is not None and version < cut)
    return [name for _, name in doomed] + [name for name in names if name == _STALE_CHECKSUM]


def cut_version(names: list[str], keep_seconds: float, first_unread: Optional[int],
                commit_time: Callable[[int], Optional[float]], now: float) -> Optional[int]:
    """The checkpoint version the log is cut at (files of earlier versions go), or None."""
    checkpoints = sorted((int(match[1]) for match in map(_CHECKPOINT.match, names) if match), reverse=True)
    for version in checkpoints[1:]:  # never the latest: a snapshot being read may start at it
        if first_unread is not None and version > first_unread:
            continue
        committed = commit_time(version)
        if committed is not None and committed <= now - keep_seconds:
            return version
    return None


def _last_version(name: str) -> Optional[int]:
    """The newest version a log file belongs to (a compaction's last), None for other files."""
    match = _VERSIONED.match(name)
    if match is None:
        return None
    return int(match[2] or match[1])
