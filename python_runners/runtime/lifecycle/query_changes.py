"""Knowing when a streaming model's query changed since its table was last written.

A checkpoint can follow many changes (a new filter, a new column): Spark goes on from where it
was, and the new logic applies to new rows only, while the rows already in the table keep the
old. Each run records what the table was written with (the compiled SQL and the settings that
shape its rows) as table properties; the next run compares, and the model's `on_query_change`
says what a difference does:

- `apply_to_new_rows` (default): the run goes on, says so in its output, and the properties'
  commit records it in the table's history (its userMetadata says what changed);
- `fail`: the run stops before anything starts, with what changed and the ways forward;
- `redeploy`: the new version is built beside the table and swapped in once it has caught up
  (redeploy.py).

A change the checkpoint cannot follow at all still stops the run with Spark's reason, whatever
the policy. A run that starts from no checkpoint (a new model, a full refresh) rebuilds every row
with the new query, so nothing is compared then.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from python_runners.runtime.errors import ConfigError, StreamingModelError

POLICIES = ("apply_to_new_rows", "fail", "redeploy")
DEFAULT_POLICY = "apply_to_new_rows"
FINGERPRINT = "streaming.query_fingerprint"
SQL = "streaming.query_sql"
SETTINGS = "streaming.query_settings"
RECORDED = (FINGERPRINT, SQL, SETTINGS)  # the table properties that record the query
# The settings that decide which rows the table gets and how; a new trigger or checkpoint path
# changes when and where, not what.
SHAPING_SETTINGS = (
    "output_mode", "unique_key", "watermark", "dedupe", "expectations", "quarantine_table",
    "keys", "sequence_by", "apply_as_deletes", "apply_as_truncates", "column_list",
    "except_column_list", "stored_as", "track_history_column_list", "track_history_except_column_list",
)
_EMPTY = (None, "", [], {})
_DEFAULTS = {"output_mode": "append"}
_UNSET = {key: (*_EMPTY, default) for key, default in _DEFAULTS.items()}  # written out or not
DIFF_LINES_SHOWN = 12
LINE_WIDTH = 120  # of each line of what changed (a longer SQL line or value is cut, with ...)
NOTE_WIDTH = 200  # of the run output's one-line note of it
NOTE_SQL_WIDTH = 60  # of each of the SQL's changed lines in that note
SQL_HEADER = "SQL (- before, + now):"
_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)
# The field that tells the items of a listed setting apart: an expectation by its name, one of
# several watermarks by its column.
_ITEM_IDS = ("name", "column")
_PART_INDENT = "    "  # a part of a setting's change on a line of its own


class QueryChangeConfigError(ConfigError):
    pass


def policy_from_config(model: str, value: Any, materialized: str = "streaming_table") -> str:
    if value in (None, ""):
        return DEFAULT_POLICY
    if value not in POLICIES:
        raise QueryChangeConfigError(
            f"Model {model}: on_query_change is {value!r}; use one of {', '.join(map(repr, POLICIES))}."
        )
    if value == "redeploy" and materialized != "streaming_table":
        raise QueryChangeConfigError(
            f"Model {model}: on_query_change 'redeploy' is for streaming_table models; a "
            f"{materialized} keeps rows beside its table (its history, its tombstones) that a "
            "rebuild beside it would not carry over. Use 'fail' or 'apply_to_new_rows', and "
            f"rebuild with `dbt run --full-refresh --select {model}+` when old rows must change too."
        )
    return str(value)


@dataclass(frozen=True)
class QueryVersion:
    """What a run writes the table with: its compiled SQL and the settings that shape rows."""

    sql: str
    settings: str  # canonical JSON

    @classmethod
    def of_node(cls, node: Mapping[str, Any]) -> Optional["QueryVersion"]:
        """None while the model is only being compiled (no compiled SQL yet)."""
        sql = node.get("compiled_code")
        if not sql:
            return None
        config = node.get("config") or {}
        shaping = {key: config[key] for key in SHAPING_SETTINGS if config.get(key) not in _UNSET.get(key, _EMPTY)}
        return cls(
            sql="\n".join(line.rstrip() for line in str(sql).strip().splitlines()),
            settings=json.dumps(shaping, sort_keys=True, default=str),
        )

    @property
    def fingerprint(self) -> str:
        # Layout and comments are not the query: reformatting the SQL is no change.
        return hashlib.sha256(f"{_words(self.sql)}\n{self.settings}".encode()).hexdigest()[:16]

    def properties(self) -> dict[str, str]:
        return {FINGERPRINT: self.fingerprint, SQL: self.sql, SETTINGS: self.settings}

    def changes_since(self, recorded: Mapping[str, str]) -> Optional[str]:
        """What changed since the version recorded in a table's properties, a short line per
        changed setting (an expectation added, removed or changed by name; a value before and
        now) and the SQL's changed lines; None when nothing did, or nothing was recorded (a
        table older than this check). No line is longer than LINE_WIDTH."""
        before = recorded.get(FINGERPRINT)
        if before is None or before == self.fingerprint:
            return None
        lines = []
        old_settings, new_settings = json.loads(recorded.get(SETTINGS) or "{}"), json.loads(self.settings)
        for key in sorted(set(old_settings) | set(new_settings)):
            old, new = (settings.get(key, _DEFAULTS.get(key)) for settings in (old_settings, new_settings))
            if old != new:
                parts = _setting_change(old, new)
                line = f"  {key}: {'; '.join(parts)}"
                # too long for a line: each rule (column, field) added, removed or changed on its own
                if len(line) <= LINE_WIDTH or len(parts) == 1:
                    lines.append(_cut(line))
                else:
                    lines += [f"  {key}:", *(_cut(_PART_INDENT + part) for part in parts)]
        old_sql = recorded.get(SQL) or ""
        diff = [] if _words(old_sql) == _words(self.sql) else _sql_diff(old_sql, self.sql)
        if diff:
            lines.append(f"  {SQL_HEADER}")
            lines += diff[:DIFF_LINES_SHOWN]
            if len(diff) > DIFF_LINES_SHOWN:
                lines.append(f"  ... {len(diff) - DIFF_LINES_SHOWN} more changed lines")
        return "\n".join(lines) or "  the query's layout only"


def check(model: str, policy: str, query: Optional[QueryVersion], recorded: Mapping[str, str]) -> Optional[str]:
    """Before a run that continues from a checkpoint: None when the query is unchanged; what
    changed when it applies to new rows or is redeployed; a StreamingModelError under `fail`."""
    if query is None:
        return None
    changed = query.changes_since(recorded)
    if changed is None:
        return None
    if policy == "fail":
        raise StreamingModelError(
            f"Model {model}: its query changed since the table was last written, and "
            f"on_query_change is 'fail':\n{changed}\nNothing was started. To apply the change to "
            f"new rows only (rows already in the table keep the old logic), set "
            f"on_query_change='apply_to_new_rows' for this run; to rebuild every row with it while "
            f"readers keep the old table until the new one has caught up, set "
            f"on_query_change='redeploy'; or undo the change."
        )
    return changed


def applied_note(changed: str) -> str:
    """The run output's words for a change applied to new rows only: what changed, in one line."""
    return f"; query changed since the last run ({summary(changed)}): applied to new rows only"


def history_note(changed: str) -> str:
    """The userMetadata of the commit that records the new query."""
    return "query changed, applied to new rows only:\n" + changed


def summary(changed: str, width: int = NOTE_WIDTH) -> str:
    """What changes_since (or any reason given in lines) says, in one line of at most `width`:
    each changed setting as it says it, then the SQL's first changed lines."""
    items, sql, more_sql = [], [], 0
    in_sql = False
    for raw in changed.strip("\n").splitlines():
        line = raw.strip()
        if line == SQL_HEADER:
            in_sql = True
        elif in_sql and line[:2] in ("- ", "+ "):
            sql.append(line)
        elif in_sql and re.fullmatch(r"\.\.\. \d+ more changed lines", line):
            more_sql += int(line.split()[1])
        elif raw.startswith(_PART_INDENT) and items:  # one part of a setting said over lines
            items[-1] += (" " if items[-1].endswith(":") else "; ") + line
        elif line:
            items.append(line)
    if sql:
        more_sql += len(sql) - 2 if len(sql) > 2 else 0
        more = f" (+{more_sql} more lines)" if more_sql else ""
        items.append(f"SQL: {' / '.join(_cut(line, NOTE_SQL_WIDTH) for line in sql[:2])}{more}")
    shown: list[str] = []
    for index, item in enumerate(items):
        room = width if index == len(items) - 1 else width - len(" | +99 more")
        if shown and len(" | ".join([*shown, item])) > room:
            break
        shown.append(item)
    left = len(items) - len(shown)
    return _cut(" | ".join(shown), width - (len(f" | +{left} more") if left else 0)) + (
        f" | +{left} more" if left else "")


def _setting_change(old: Any, new: Any) -> list[str]:
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


def _sql_diff(old: str, new: str) -> list[str]:
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
        return _cut(line, width)
    start = differs - 40
    return _cut(f"{line[:4]}...{line[start:]}", width)


def _words(sql: str) -> str:
    return " ".join(_COMMENT.sub(" ", sql).split())


def _cut(line: str, width: int = LINE_WIDTH) -> str:
    return line if len(line) <= width else line[: width - 3] + "..."


def _shown(value: Any) -> str:
    if value is None:
        return "(unset)"
    return f"'{value}'" if isinstance(value, str) else json.dumps(value)
