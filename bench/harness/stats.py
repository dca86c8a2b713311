"""Medians, percentiles and the labels of sizes, as every part reports them."""

from __future__ import annotations

import math
from statistics import median
from typing import Iterable, Mapping


def nearest_rank(values: list[float], percent: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(percent / 100 * len(ordered)) - 1)]


def medians(records: Iterable[Mapping], keys: Iterable[str] | None = None,
            missing: float | None = None) -> dict[str, float]:
    """Per key (by default the first record's), the median of the records' values; a record
    without the key counts as `missing` where that is given (else it is an error)."""
    records = list(records)
    return {key: median(record[key] if missing is None else record.get(key, missing) for record in records)
            for key in (records[0] if keys is None else keys)}


def size_label(count: int) -> str:
    """10000 -> 10k, 1000000 -> 1M: the suffix of a figure's name."""
    for size, suffix in ((1_000_000, "M"), (1_000, "k")):
        if count >= size and count % size == 0:
            return f"{count // size}{suffix}"
    return str(count)


def count_or_share(spec: str, total: int) -> int:
    """`spec` a count (`500`) or a share of `total` (`1%`, at least 1)."""
    if spec.endswith("%"):
        return max(1, round(total * float(spec[:-1]) / 100))
    return int(spec)


def minutes_and_seconds(seconds: float) -> str:
    return f"{int(seconds // 60)}m{seconds % 60:04.1f}s"
