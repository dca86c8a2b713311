"""What a cdc_table should hold after a whole change feed, worked out in plain Python.

The tests and the chaos audit compare the Delta tables with this. Changes are dicts; the
feed's order does not matter, only each change's sequence (a tuple of the sequence_by columns).
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Sequence

Change = Mapping[str, object]


def _by_key(changes: Iterable[Change], keys: Sequence[str], sequence_by: Sequence[str]):
    """Each key's changes, once per sequence, in sequence order."""
    per_key: dict[tuple, dict[tuple, Change]] = {}
    for change in changes:
        key = tuple(change[k] for k in keys)
        per_key.setdefault(key, {}).setdefault(tuple(change[s] for s in sequence_by), change)
    return {key: sorted(seen.items()) for key, seen in per_key.items()}


def scd1(
    changes: Iterable[Change], keys: Sequence[str], sequence_by: Sequence[str],
    is_delete: Callable[[Change], bool], stored: Sequence[str],
) -> list[dict]:
    """The current row of every key whose latest change is not a delete."""
    rows = []
    for history in _by_key(changes, keys, sequence_by).values():
        _, latest = history[-1]
        if not is_delete(latest):
            rows.append({column: latest[column] for column in stored})
    return rows


def scd2(
    changes: Iterable[Change], keys: Sequence[str], sequence_by: Sequence[str],
    is_delete: Callable[[Change], bool], stored: Sequence[str],
    start_at: str = "__start_at", end_at: str = "__end_at",
) -> list[dict]:
    """Every version: each upsert starts one, valid until the key's next change (null if none).
    A sequence of several columns is a tuple here (a struct in the table)."""
    rows = []
    for history in _by_key(changes, keys, sequence_by).values():
        for position, (sequence, change) in enumerate(history):
            if is_delete(change):
                continue
            following = history[position + 1][0] if position + 1 < len(history) else None
            unwrap = (lambda s: s[0]) if len(sequence_by) == 1 else (lambda s: s)
            rows.append({
                **{column: change[column] for column in stored},
                start_at: unwrap(sequence),
                end_at: None if following is None else unwrap(following),
            })
    return rows
