"""Whether a served model's input may have something new, found without Spark and almost free.

The dataflow scheduler (serve/dataflow.py) asks every input of every served model many times a
second, so a watch must cost next to nothing when nothing changed:

- a local landing folder: the modification times of the folder and of its subfolders (a file
  created or renamed into a folder changes that folder's time), one `stat` each;
- a local Delta table: whether the commit file after the last version seen exists, one `stat`;
- the same on any other file system (S3, HDFS, ...), through Hadoop, at most every
  `REMOTE_POLL_SECONDS`: a listing there is a request, not a `stat`.

A watch may say "changed" when nothing the stream reads did (a hidden temporary file, a Delta
checkpoint): the scheduler then asks lifecycle/up_to_date.py, which reads the checkpoint, before
it starts a query. It must never miss a change, so anything it cannot read counts as changed.
Inputs no watch can follow (Kafka, a rate source, a glob) are `watchable` False: their model is
served by a processing-time query instead.
"""

from __future__ import annotations

import os
import time
from typing import Callable, Optional, Protocol

from dbt_spark_streaming.jvm.hadoop_fs import local_path
from dbt_spark_streaming.jvm.plans import StreamingInput

FILE_FORMATS = ("json", "csv", "parquet", "text", "orc", "avro", "binaryFile", "xml")
REMOTE_POLL_SECONDS = 5.0


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
