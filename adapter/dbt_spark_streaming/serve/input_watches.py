"""Whether a served model's input may have something new, found without Spark and almost free.

The dataflow scheduler (serve/dataflow.py) asks every input of every served model many times a
second, so a watch must cost next to nothing when nothing changed:

- a local landing folder: the modification times of the folder and of its subfolders (a file
  created or renamed into a folder changes that folder's time), one `stat` each;
- a local Delta table: whether the commit file after the last version seen exists, one `stat`;
- on any other file system (S3, HDFS, ...), through Hadoop, at most every `REMOTE_POLL_SECONDS`
  (longer for a model whose target_lag allows, `remote_poll_seconds`), as each look there is a
  request a bucket bills: a Delta table, a HEAD request for its next commit file (`NextCommits`);
  a folder, a listing of it.

A watch may say "changed" when nothing the stream reads did (a hidden temporary file, a Delta
checkpoint): the scheduler then asks lifecycle/up_to_date.py, which reads the checkpoint, before
it starts a query. It must never miss a change, so anything it cannot read counts as changed.
Inputs no watch can follow (Kafka, a rate source, a glob) are `watchable` False: their model is
served by a processing-time query instead.
"""

from __future__ import annotations

import os
import time
from typing import Callable, Iterable, Optional, Protocol

from dbt_spark_streaming.jvm.hadoop_fs import local_path
from dbt_spark_streaming.jvm.plans import StreamingInput

FILE_FORMATS = ("json", "csv", "parquet", "text", "orc", "avro", "binaryFile", "xml")
REMOTE_POLL_SECONDS = 5.0
# A model that may lag minutes behind its input need not look every 5 s: a quarter of its target.
REMOTE_POLL_SHARE_OF_TARGET_LAG = 0.25
REMOTE_POLL_MAX_SECONDS = 300.0


def remote_poll_seconds(target_lags: Iterable[Optional[float]]) -> float:
    """How often an input on an object store is looked at, given its readers' target lags: every
    REMOTE_POLL_SECONDS, or a quarter of the tightest target when every reader has a longer one."""
    lags = list(target_lags)
    if not lags or any(lag is None for lag in lags):
        return REMOTE_POLL_SECONDS
    share = min(lags) * REMOTE_POLL_SHARE_OF_TARGET_LAG
    return min(REMOTE_POLL_MAX_SECONDS, max(REMOTE_POLL_SECONDS, share))


class Watch(Protocol):
    def changed_since_last(self) -> Optional[float]:
        """The wall time of the change when the input changed since the last call, else None."""


def watchable(found: StreamingInput) -> bool:
    return (found.path is not None and not any(c in found.path for c in "*?[{")
            and (found.format == "delta" or found.format in FILE_FORMATS))


def watch_for(found: StreamingInput, remote: Callable[[StreamingInput], "Watch"]) -> "Watch":
    """The cheapest watch of a watchable input; `remote` makes the Hadoop one (it needs Spark)."""
    local = local_path(found.path or "")
    if local is None:
        return remote(found)
    return LocalDeltaWatch(local) if found.format == "delta" else LocalFolderWatch(local)


class LocalFolderWatch:
    """The folder and every folder below it, by modification time."""

    def __init__(self, root: str):
        self.root = root
        self._times = self._scan()

    def _scan(self) -> dict[str, float]:
        times = {}
        for folder, folders, _files in os.walk(self.root):
            try:
                times[folder] = os.stat(folder).st_mtime
            except OSError:
                continue
            folders[:] = [name for name in folders if not name.startswith(".")]
        return times

    def changed_since_last(self) -> Optional[float]:
        changed_at = None
        if not self._times:  # not there yet
            self._times = self._scan()
            return max(self._times.values()) if self._times else None
        for folder, seen in self._times.items():
            try:
                now = os.stat(folder).st_mtime
            except OSError:  # removed: say changed, and scan again
                now = time.time()
            if now != seen:
                changed_at = max(changed_at or 0.0, now)
        if changed_at is not None:
            self._times = self._scan()  # new subfolders, and the times just read
        return changed_at


class LocalDeltaWatch:
    """The table's next commit file, `_delta_log/<version + 1>.json`."""

    def __init__(self, table: str):
        self.log = os.path.join(table, "_delta_log")
        self._next = _latest_local_version(self.log) + 1

    def changed_since_last(self) -> Optional[float]:
        changed_at = None
        while True:
            try:
                changed_at = os.stat(_commit_file(self.log, self._next)).st_mtime
            except OSError:
                break
            self._next += 1
        if changed_at is None and self._next > 0 and not os.path.isdir(self.log):
            self._next = 0  # the table was dropped: its next first commit is news
        return changed_at


def _commit_file(log: str, version: int) -> str:
    return os.path.join(log, f"{version:020d}.json")


def _latest_local_version(log: str) -> int:
    try:
        names = os.listdir(log)
    except OSError:
        return -1
    return max((int(name[:-5]) for name in names if name.endswith(".json") and name[:-5].isdigit()),
               default=-1)


class PolledWatch:
    """Any other file system: `read` (a Hadoop listing's fingerprint) at most every `every` s."""

    def __init__(self, read: Callable[[], object], every: float = REMOTE_POLL_SECONDS):
        self._read, self._every = read, every
        self._last = self._read_or_none()
        self._next_at = time.monotonic() + every

    def _read_or_none(self) -> object:
        try:
            return self._read()
        except Exception:  # unreadable now: compared as a value of its own, so a recovery is news
            return None

    def changed_since_last(self) -> Optional[float]:
        if time.monotonic() < self._next_at:
            return None
        self._next_at = time.monotonic() + self._every
        now = self._read_or_none()
        if now == self._last and now is not None:
            return None
        self._last = now
        return time.time()


class NextCommits:
    """The latest version of a Delta table on an object store, for a PolledWatch: the version
    listed once, then a probe for the commit file after the last one seen (one HEAD request
    while nothing is new) instead of a listing of the whole log. A table dropped and created
    again starts its versions over, which this misses: the scheduler's recheck finds that."""

    def __init__(self, listed: Callable[[], int], is_commit: Callable[[int], bool]):
        self._listed, self._is_commit = listed, is_commit
        self._latest: Optional[int] = None

    def __call__(self) -> int:
        if self._latest is None:
            self._latest = self._listed()
        while self._is_commit(self._latest + 1):
            self._latest += 1
        return self._latest
