"""A fault seam: a micro-batch that fails right after a Delta commit, before its checkpoint's.

That is the state a SIGKILL at the worst moment leaves: the batch's offsets written, its Delta
version committed, `commits/<batch>` missing. The next run replays the batch, and the writes'
transaction ids and batch marks keep what it committed from landing twice
(writes/idempotent_batches.py). The test suite arms the seam in its own process to prove that
replay in seconds, where a killed `dbt run` takes a minute; nothing in a user's run arms it, and
unarmed it costs a look at an empty list per commit.

The writes call `committed(table)` after each Delta commit a batch makes, so the fault can come
between two commits of one batch (a quarantine's and the table's, a MERGE and its tombstones).
Delta's own sink (a complete-mode model without a quarantine) runs no Python between its commit
and the checkpoint's: there `after_sink_commit` takes the checkpoint's record of the last batch
back once the query has ended, which leaves the same files behind.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.errors import StreamingModelError

COMMITS = "commits"


class InjectedCommitFault(StreamingModelError):
    """The failure the seam injects, told apart from any real one."""


@dataclass
class ArmedFault:
    """Fail the batch that makes the `after_commits`-th commit to `table` ("schema.table") once
    armed; `fired` once it has."""

    table: str
    after_commits: int = 1
    commits_seen: int = 0
    fired: bool = False

    def matches(self, table: str) -> bool:
        """`table` as a write names it: "schema.table", or its location under the warehouse."""
        if table == self.table:
            return True
        schema, _, name = self.table.partition(".")
        return table.rstrip("/").endswith(f"/{schema}.db/{name}")

    def fault(self) -> InjectedCommitFault:
        return InjectedCommitFault(
            f"Table {self.table}: a fault injected right after commit {self.after_commits} of the batch "
            "to it, before the checkpoint recorded the batch (the commit fault seam)"
        )


_armed: list[ArmedFault] = []
_lock = threading.Lock()


@contextmanager
def failing_after_commit(table: str, after_commits: int = 1) -> Iterator[ArmedFault]:
    """While inside, the batch that makes the `after_commits`-th Delta commit to `table` fails
    right after it, once."""
    armed = ArmedFault(table, after_commits)
    with _lock:
        _armed.append(armed)
    try:
        yield armed
    finally:
        with _lock:
            _armed.remove(armed)


def committed(table: str) -> None:
    """Said by a batch's write right after each Delta commit it makes to `table`."""
    if not _armed:
        return
    armed = _due(table)
    if armed is not None:
        armed.commits_seen += 1
        if armed.commits_seen >= armed.after_commits:
            armed.fired = True
            raise armed.fault()


def after_sink_commit(table: str, checkpoint: str) -> None:
    """After a query into Delta's own sink ended: if a fault is armed for `table`, the
    checkpoint's record of its last batch is removed, and the fault raised."""
    if not _armed:
        return
    armed = _due(table)
    if armed is not None and uncommit_last_batch(checkpoint) is not None:
        armed.fired = True
        raise armed.fault()


def uncommit_last_batch(checkpoint: str) -> int | None:
    """Remove the last `commits/<batch>` of a local checkpoint (and Hadoop's checksum beside it):
    the batch it returns is then planned but not done, as after a crash right before its commit."""
    folder = os.path.join(hadoop_fs.local_path(checkpoint) or checkpoint, COMMITS)
    batches = sorted(int(name) for name in _names(folder) if name.isdigit())
    if not batches:
        return None
    last = batches[-1]
    os.remove(os.path.join(folder, str(last)))
    checksum = os.path.join(folder, f".{last}.crc")
    if os.path.exists(checksum):
        os.remove(checksum)
    return last


def _due(table: str) -> ArmedFault | None:
    with _lock:
        return next((armed for armed in _armed if not armed.fired and armed.matches(table)), None)


def _names(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except FileNotFoundError:
        return []
