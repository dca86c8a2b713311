"""Source rows of the "latest windows" shape: readings per device and minute, counted per window.

Key number i is (window i // DEVICES, device i % DEVICES), so keys in order are windows in
time order. The history comes in HISTORY_CHUNKS appends, each caught up on its own, so the
target's files hold time ranges the way a long-running stream's batches left them (one history
batch would spread every window over every file). A measured batch touches the latest keys
(the windows still open) and opens the next ones: the usual update-mode case, where older
windows are final.
"""

from __future__ import annotations

import random
from typing import Callable, Iterator

from pyspark.sql import DataFrame, SparkSession

from bench.modes.source_batches import MAX_VALUE, ChangedBatchShape

SOURCE_SCHEMA = "device string, event_time timestamp, value bigint"
DEVICES = 100
HISTORY_CHUNKS = 10
START_SECONDS = 1_767_225_600  # 2026-01-01 00:00 UTC; each window is one minute after it
MODEL_SQL = (
    "select window.start as window_start, window.end as window_end, device, "
    "count(*) as n, sum(value) as total from {stream} "
    "group by window(event_time, '1 minute'), device"
)
UNIQUE_KEY = ("window_start", "window_end", "device")


def readings(key_numbers: DataFrame) -> DataFrame:
    """One reading per key number (column `id`, `value`), half a minute into the key's window."""
    return key_numbers.selectExpr(
        f"format_string('device-%03d', id % {DEVICES}) as device",
        f"timestamp_seconds({START_SECONDS} + (id div {DEVICES}) * 60 + 30) as event_time",
        "value",
    )


def history_steps(spark: SparkSession, table: str, keys: int) -> Iterator[Callable[[], None]]:
    """Appends of consecutive key ranges, oldest windows first; the caller catches up after each."""
    bounds = [keys * chunk // HISTORY_CHUNKS for chunk in range(HISTORY_CHUNKS + 1)]
    for low, high in zip(bounds, bounds[1:]):
        if high > low:
            yield lambda low=low, high=high: _append(
                spark, table, spark.range(low, high).selectExpr("id", f"id % {MAX_VALUE} as value")
            )


def append_latest(
    spark: SparkSession, table: str, shape: ChangedBatchShape, known_keys: int, rng: random.Random
) -> int:
    """The latest existing keys plus a few new ones after them; returns the keys now known."""
    first = max(0, known_keys - shape.existing_keys)
    rows = [(key, rng.randrange(MAX_VALUE)) for key in range(first, known_keys + shape.new_keys)]
    _append(spark, table, spark.createDataFrame(rows, "id bigint, value bigint"))
    return known_keys + shape.new_keys


def _append(spark: SparkSession, table: str, key_numbers: DataFrame) -> None:
    readings(key_numbers).write.format("delta").mode("append").saveAsTable(table)
