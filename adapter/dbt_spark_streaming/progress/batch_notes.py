"""Counts a micro-batch's write works out itself (not Spark's progress), by query id and batch id.

A foreachBatch function runs in the driver's Python process, the same process that hears the
query's progress, so what it counts (a cdc_table's tied changes) is kept here for the run's summary
and the progress table's row of that batch. The query id is the checkpoint's, as in Spark's
progress. Bounded: the oldest notes go first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Iterable

CDC_CHANGES_TIED = "cdc_changes_tied"  # changes a sequence tie left out (writes/cdc/sequence_ties.py)
_KEPT = 10_000
_notes: "OrderedDict[tuple[str, int], dict[str, int]]" = OrderedDict()
_lock = threading.Lock()


def add(query_id: str, batch_id: int, name: str, count: int) -> None:
    """Set (not add to) `name` for the batch: a batch replayed after a crash counts once."""
    with _lock:
        _notes.setdefault((str(query_id), int(batch_id)), {})[name] = int(count)
        while len(_notes) > _KEPT:
            _notes.popitem(last=False)


def of(query_id: str | None, batch_id: int | None, name: str) -> int | None:
    """The batch's count; None when nothing was noted for it."""
    if query_id is None or batch_id is None:
        return None
    with _lock:
        return _notes.get((str(query_id), int(batch_id)), {}).get(name)


def total(query_id: str, batch_ids: Iterable[int], name: str) -> int:
    return sum(of(query_id, batch_id, name) or 0 for batch_id in batch_ids)
