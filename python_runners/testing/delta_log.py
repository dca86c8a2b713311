"""A Delta table's log read as files: its commits, their versions and actions, no Spark.

The chaos run, the tests that kill a run on a commit and the latency benchmark watch tables that
another process writes, from processes without a Spark session (a Derby metastore admits one
JVM). Inside a run, dbt_spark_streaming.delta.tables reads the same log through Delta itself;
which micro-batch a commit holds is dbt_spark_streaming.writes.batch_marks' to say.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

LOG_FOLDER = "_delta_log"
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


def live_data_files(table: Path | str) -> set[str]:
    """The data files the table holds now, by replaying its commits (added minus removed)."""
    live: set[str] = set()
    for commit in commit_files(table):
        for action in commit.actions():
            if "add" in action:
                live.add(action["add"]["path"])
            elif "remove" in action:
                live.discard(action["remove"]["path"])
    return live
