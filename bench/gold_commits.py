"""When each commit of a Delta table became visible, and the largest value of a column it holds.

Read straight from the table's _delta_log (JSON commit files, per-file column statistics), so a
process without Spark can watch a table that another process writes.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from python_runners.runtime.writes.batch_marks import recorded_batch_in

_COMMIT_FILE = re.compile(r"^(\d{20})\.json$")


@dataclass(frozen=True)
class Commit:
    version: int
    visible_at: float  # the commit file's mtime, epoch seconds: the moment readers can see it
    max_value: float | None  # of the watched column over the table's files added by this commit
    batch_id: int | None = None  # the streaming write's micro-batch (python_runners/runtime/writes/batch_marks.py)


def commits(table_path: str, column: str, after_version: int = -1) -> list[Commit]:
    log = Path(table_path) / "_delta_log"
    if not log.is_dir():
        return []
    found = []
    for name in sorted(os.listdir(log)):
        match = _COMMIT_FILE.match(name)
        if not match or int(match.group(1)) <= after_version:
            continue
        path = log / name
        found.append(_commit(int(match.group(1)), path, column))
    return found


def _commit(version: int, commit_file: Path, column: str) -> Commit:
    values = []
    actions = [json.loads(line) for line in commit_file.read_text().splitlines()]
    for action in actions:
        add = action.get("add")
        if add and add.get("stats"):
            value = json.loads(add["stats"]).get("maxValues", {}).get(column)
            if value is not None:
                values.append(value)
    recorded = recorded_batch_in(actions)
    batch_id = recorded[1] if recorded else None
    return Commit(version, commit_file.stat().st_mtime, max(values, default=None), batch_id)
