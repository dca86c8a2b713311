"""A Delta table's log read as files: its commits, their versions and actions, its latest
checkpoint, no Spark.

The chaos run, the tests that kill a run on a commit and the latency benchmarks watch tables that
another process writes, from processes without a Spark session (a Derby metastore admits one
JVM). Inside a run, dbt_spark_streaming.delta.tables reads the same log through Delta itself;
which micro-batch a commit holds is dbt_spark_streaming.writes.batch_marks' to say. A
checkpoint's Parquet is read by python_runners/testing/parquet_file.py (no pyarrow, no JVM).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from python_runners.testing import parquet_file

LOG_FOLDER = "_delta_log"
LAST_CHECKPOINT = "_last_checkpoint"
SIDECARS = "_sidecars"
_COMMIT_FILE = re.compile(r"^(\d+)\.json$")


@dataclass(frozen=True)
class CommitFile:
    version: int
    path: Path

    def actions(self) -> list[dict]:
        """The commit's actions (commitInfo, add, remove, txn, metaData, ...), one a line."""
        return [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines() if line]

    @property
    def written_at(self) -> float:
        """The file's mtime, epoch seconds: the moment readers could see the commit."""
        return self.path.stat().st_mtime


def log_folder(table: Path | str) -> Path:
    return Path(table) / LOG_FOLDER


def is_delta_table(table: Path | str) -> bool:
    return log_folder(table).is_dir()


def commit_files(table: Path | str, after_version: int = -1) -> list[CommitFile]:
    """The table's commits after `after_version`, oldest first; none when it has no log yet."""
    log = log_folder(table)
    try:
        names = os.listdir(log)
    except FileNotFoundError:
        return []
    found = [
        CommitFile(int(match.group(1)), log / name)
        for match, name in ((_COMMIT_FILE.match(name), name) for name in names) if match
    ]
    return sorted((commit for commit in found if commit.version > after_version), key=lambda c: c.version)


def latest_version(table: Path | str) -> int:
    """The table's latest version, -1 before its first commit (or when there is no table)."""
    return max((commit.version for commit in commit_files(table)), default=-1)


def last_operation(table: Path | str) -> str | None:
    """The operation of the table's latest commit (WRITE, OPTIMIZE, VACUUM START, ...)."""
    commits = commit_files(table)
    actions = commits[-1].actions() if commits else []
    return next((action["commitInfo"].get("operation") for action in actions if "commitInfo" in action), None)


def live_data_files(table: Path | str) -> set[str]:
    """The data files the table holds now: those of its latest checkpoint, then its commits
    after it replayed (added minus removed); without a checkpoint, every commit's."""
    checkpoint = latest_checkpoint(table)
    live = set() if checkpoint is None else set(checkpoint.added_paths())
    for commit in commit_files(table, after_version=-1 if checkpoint is None else checkpoint.version):
        for action in commit.actions():
            if "add" in action:
                live.add(action["add"]["path"])
            elif "remove" in action:
                live.discard(action["remove"]["path"])
    return live


def tombstones(table: Path | str) -> int:
    """The `remove` entries (files removed, kept until the table's deletedFileRetentionDuration
    passes) in the table's latest checkpoint, which every reader of the table loads; 0 before
    its first checkpoint."""
    checkpoint = latest_checkpoint(table)
    return 0 if checkpoint is None else checkpoint.removed_count()


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint's files: one, the parts of a multi-part one, or a v2 one's top-level file and
    its sidecars (which hold its add and remove entries)."""

    version: int
    files: tuple[Path, ...]

    def removed_count(self) -> int:
        return sum(_json_count(file, "remove") if file.suffix == ".json"
                   else parquet_file.present_count(file, ("remove", "path")) for file in self.files)

    def added_paths(self) -> list[str]:
        return [path for file in self.files for path in
                (_json_paths(file, "add") if file.suffix == ".json"
                 else parquet_file.string_values(file, ("add", "path")))]


def latest_checkpoint(table: Path | str) -> Checkpoint | None:
    """The checkpoint `_delta_log/_last_checkpoint` names (its version, and `parts` for a
    multi-part one, `v2Checkpoint` for a v2 one); None when there is none yet."""
    log = log_folder(table)
    try:
        last = json.loads((log / LAST_CHECKPOINT).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    version, prefix = last["version"], f"{last['version']:020d}.checkpoint."
    if last.get("parts"):
        names = [f"{prefix}{part:010d}.{last['parts']:010d}.parquet" for part in range(1, last["parts"] + 1)]
    elif last.get("v2Checkpoint"):
        names = [last["v2Checkpoint"]["path"]]
    elif (log / f"{prefix}parquet").exists():
        names = [f"{prefix}parquet"]
    else:  # a v2 checkpoint that _last_checkpoint does not describe: <version>.checkpoint.<uuid>.<ext>
        names = sorted(name for name in os.listdir(log) if name.startswith(prefix))[:1]
    top = [log / name for name in names]
    sidecars = [log / SIDECARS / name.rsplit("/", 1)[-1] for file in top for name in
                (_json_paths(file, "sidecar") if file.suffix == ".json"
                 else parquet_file.string_values(file, ("sidecar", "path")))]
    return Checkpoint(version, (*top, *sidecars))


def _json_lines(file: Path) -> list[dict]:
    return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line]


def _json_count(file: Path, action: str) -> int:
    return sum(action in line for line in _json_lines(file))


def _json_paths(file: Path, action: str) -> list[str]:
    return [line[action]["path"] for line in _json_lines(file) if action in line]
