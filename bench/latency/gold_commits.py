"""When each commit of a Delta table became visible, and the largest value of a column it holds.

Read straight from the table's _delta_log (JSON commit files, per-file column statistics), so a
process without Spark can watch a table that another process writes.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_left
from dataclasses import dataclass
from itertools import accumulate

from dbt_spark_streaming.writes.batch_marks import recorded_batch_in
from python_runners.testing.delta_log import CommitFile, commit_files


@dataclass(frozen=True)
class Commit:
    version: int
    visible_at: float  # the commit file's mtime, epoch seconds: the moment readers can see it
    max_value: float | None  # of the watched column over the table's files added by this commit
    batch_id: int | None = None  # the streaming write's micro-batch (adapter/dbt_spark_streaming/writes/batch_marks.py)

    def holds(self, value: float) -> bool:
        """Whether the commit's files reach `value` in the watched column."""
        return self.max_value is not None and self.max_value >= value


class FirstHolding:
    """The earliest commit (by version) that holds a value: the first whose running maximum of
    the watched column reaches it, found by bisection, so a soak's hundreds of thousands of
    landings against tens of thousands of commits take seconds."""

    def __init__(self, found: list[Commit]):
        self.ordered = sorted(found, key=lambda commit: commit.version)
        self.reach = list(accumulate((-math.inf if c.max_value is None else c.max_value for c in self.ordered),
                                     max))

    def __call__(self, value: float) -> Commit:
        index = bisect_left(self.reach, value)
        if index == len(self.ordered):
            raise ValueError(f"no commit holds {value}")
        return self.ordered[index]


class CommitKeeper:
    """Every commit of a table as it appears, kept: the service's maintenance trims a table's log
    to its last minutes (lifecycle/log_history.py), so a run read only at its end would find its
    early commits gone. keep() reads the commits new since the last call."""

    def __init__(self, table_path: str, column: str):
        self.table_path, self.column = table_path, column
        self.kept: dict[int, Commit] = {}

    def keep(self) -> list[Commit]:
        latest = max(self.kept, default=-1)
        for commit in commits(self.table_path, self.column, latest):
            self.kept[commit.version] = commit
        return list(self.kept.values())


def commits(table_path: str, column: str, after_version: int = -1) -> list[Commit]:
    return [_commit(commit, column) for commit in commit_files(table_path, after_version)]


def _commit(commit: CommitFile, column: str) -> Commit:
    values = []
    actions = commit.actions()
    for action in actions:
        add = action.get("add")
        if add and add.get("stats"):
            value = json.loads(add["stats"]).get("maxValues", {}).get(column)
            if value is not None:
                values.append(value)
    recorded = recorded_batch_in(actions)
    batch_id = recorded[1] if recorded else None
    return Commit(commit.version, commit.written_at, max(values, default=None), batch_id)
