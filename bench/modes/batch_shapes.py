"""The two batch shapes update mode is measured on: where a measured batch's changed keys sit.

"random": a per-key total; each batch touches existing keys drawn at random over the whole key
range, so every data file of the target holds some (the case update mode cannot narrow).
"windows": a count per device and one-minute window; each batch touches the latest windows
only, which sit in the few files the latest batches wrote.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Iterator

from pyspark.sql import SparkSession

from bench.modes import source_batches, window_batches
from bench.modes.source_batches import ChangedBatchShape

HistorySteps = Callable[[SparkSession, str, int], Iterator[Callable[[], None]]]
ChangedAppend = Callable[[SparkSession, str, ChangedBatchShape, int, random.Random], int]


@dataclass(frozen=True)
class BatchShape:
    name: str
    model_sql: str  # {stream}: the streaming view over the source table
    unique_key: tuple[str, ...]
    history_steps: HistorySteps  # appends that build the state, each caught up on its own
    append_changed: ChangedAppend  # one measured batch; returns the keys now known
    touched: str  # how a measured batch picks its keys, for the printed setup


def _one_history_append(spark: SparkSession, table: str, keys: int) -> Iterator[Callable[[], None]]:
    yield lambda: source_batches.append_history(spark, table, keys)


RANDOM = BatchShape(
    name="random",
    model_sql="select key, count(*) as n, sum(value) as total from {stream} group by key",
    unique_key=("key",),
    history_steps=_one_history_append,
    append_changed=source_batches.append_changed,
    touched="existing keys drawn at random over all keys, plus new keys; history in 1 batch",
)
WINDOWS = BatchShape(
    name="windows",
    model_sql=window_batches.MODEL_SQL,
    unique_key=window_batches.UNIQUE_KEY,
    history_steps=window_batches.history_steps,
    append_changed=window_batches.append_latest,
    touched=(f"the latest existing keys ({window_batches.DEVICES} devices per one-minute window) "
             f"plus new keys after them; history in {window_batches.HISTORY_CHUNKS} batches, "
             "oldest windows first"),
)
SHAPES = {shape.name: shape for shape in (RANDOM, WINDOWS)}
