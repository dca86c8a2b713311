"""What changed between two versions of a model's query, in short lines a person reads: a
setting's value before and now (an expectation added, removed or changed by name, a column added
to a list), and the SQL's changed lines cut around where they differ."""

from __future__ import annotations

import difflib
import json
import os
import re
from typing import Any, Mapping, Optional

DIFF_LINES_SHOWN = 12
LINE_WIDTH = 120  # of each line of what changed (a longer SQL line or value is cut, with ...)
SQL_HEADER = "SQL (- before, + now):"
PART_INDENT = "    "  # a part of a setting's change on a line of its own
_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)
# The field that tells the items of a listed setting apart: an expectation by its name, one of
# several watermarks by its column.
_ITEM_IDS = ("name", "column")


def setting_change(old: Any, new: Any) -> list[str]:
    """A changed setting, short: an expectation (or watermark) added, removed or changed by
    name (column), a column added to or removed from a list, a field of a mapping; else both
    values."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        same_item = _item_id(old, new)  # one watermark each: the same column's?
        if same_item is None or old[same_item] == new[same_item]:
            return [_fields_changed(old, new)]
    old_items, new_items = _as_items(old), _as_items(new)  # [] when unset: every item added
    id_key = _item_id(*old_items, *new_items) if None not in (old_items, new_items) else None
    if id_key:
        said = _items_change(id_key, old_items, new_items)
        if said:
            return said
    old_columns, new_columns = _columns(old), _columns(new)
    listed = list in (type(old), type(new))  # not two single values: 'append' -> 'complete'
    if old_columns and new_columns and listed and set(old_columns) != set(new_columns):
        return [*(f"+ {column}" for column in new_columns if column not in old_columns),
                *(f"- {column}" for column in old_columns if column not in new_columns)]
    return [f"{_shown(old)} -> {_shown(new)}"]


def _fields_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    keys = [*old, *(key for key in new if key not in old)]
    return ", ".join(f"{key} {_shown(old.get(key))} -> {_shown(new.get(key))}"
                     for key in keys if old.get(key) != new.get(key))


def _items_change(id_key: str, old: list, new: list) -> list[str]:
    before, now = {item[id_key]: item for item in old}, {item[id_key]: item for item in new}
    if len(before) < len(old) or len(now) < len(new):
        return []  # not told apart by it after all
    said = [f"+ {name} ({_described(item, id_key)})" for name, item in now.items() if name not in before]
    said += [f"- {name}" for name in before if name not in now]
    for name, item in now.items():
        was = before.get(name)
        if was is not None and was != item:
            said.append(f"~ {name} ({_fields_changed(was, item)})")
    return said


def _described(item: Mapping[str, Any], id_key: str) -> str:
    if "expression" in item:  # an expectation: its rule and what a row breaking it gets
        return f"{item['expression']}, {item.get('action') or 'warn'}"
    return ", ".join(f"{key} {_shown(value)}" for key, value in item.items() if key != id_key)


def _as_items(value: Any) -> Optional[list]:
    if value is None:
        return []
    if isinstance(value, Mapping):
        return [value]
    if isinstance(value, list) and all(isinstance(item, Mapping) for item in value):
        return value
    return None


def _item_id(*items: Any) -> Optional[str]:
    """The field every item has as text: what the items are told apart by."""
    if not items:
        return None
    for key in _ITEM_IDS:
        if all(isinstance(item, Mapping) and isinstance(item.get(key), str) for item in items):
            return key
    return None


def _columns(value: Any) -> Optional[list[str]]:
    """A column or list of columns (unique_key, keys, except_columns, ...) as a list."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return value
    return None


def sql_diff(old: str, new: str) -> list[str]:
    """The changed lines, `- ` before and `+ ` now, each cut to LINE_WIDTH around where it
    differs from the line it replaces."""
    hunks: list[tuple[list[str], list[str]]] = []
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0):
        if line.startswith("@@"):
            hunks.append(([], []))
        elif hunks and line[:1] in "-+" and not line.startswith(("---", "+++")):
            hunks[-1][line[0] == "+"].append(line[1:])
    diff = []
    for removed, added in hunks:
        for index, line in enumerate(removed):
            diff.append(_cut_around(f"  - {line}", added[index] if index < len(added) else ""))
        for index, line in enumerate(added):
            diff.append(_cut_around(f"  + {line}", removed[index] if index < len(removed) else ""))
    return diff


def _cut_around(line: str, other: str, width: int = LINE_WIDTH) -> str:
    """A long line cut so that where it first differs from `other` stays in sight."""
    if len(line) <= width:
        return line
    differs = 4 + len(os.path.commonprefix([line[4:], other]))
    if differs < width - 20:
        return cut(line, width)
    start = differs - 40
    return cut(f"{line[:4]}...{line[start:]}", width)


def words(sql: str) -> str:
    return " ".join(_COMMENT.sub(" ", sql).split())


def cut(line: str, width: int = LINE_WIDTH) -> str:
    return line if len(line) <= width else line[: width - 3] + "..."


def _shown(value: Any) -> str:
    if value is None:
        return "(unset)"
    return f"'{value}'" if isinstance(value, str) else json.dumps(value)
