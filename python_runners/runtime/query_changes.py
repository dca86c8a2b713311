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
_UNSET = {"output_mode": (*_EMPTY, "append")}  # the default, written out or not
DIFF_LINES_SHOWN = 12
_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)


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
        words = " ".join(_COMMENT.sub(" ", self.sql).split())
        return hashlib.sha256(f"{words}\n{self.settings}".encode()).hexdigest()[:16]

    def properties(self) -> dict[str, str]:
        return {FINGERPRINT: self.fingerprint, SQL: self.sql, SETTINGS: self.settings}

    def changes_since(self, recorded: Mapping[str, str]) -> Optional[str]:
        """What changed since the version recorded in a table's properties, in a few lines;
        None when nothing did, or nothing was recorded (a table older than this check)."""
        before = recorded.get(FINGERPRINT)
        if before is None or before == self.fingerprint:
            return None
        lines = []
        old_settings, new_settings = json.loads(recorded.get(SETTINGS) or "{}"), json.loads(self.settings)
        for key in sorted(set(old_settings) | set(new_settings)):
            if old_settings.get(key) != new_settings.get(key):
                lines.append(f"  {key}: {_shown(old_settings.get(key))} -> {_shown(new_settings.get(key))}")
        diff = [
            f"  {line[0]} {line[1:]}" for line in difflib.unified_diff(
                (recorded.get(SQL) or "").splitlines(), self.sql.splitlines(), lineterm="", n=0
            )
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
        ]
        if diff:
            lines.append("  SQL (- before, + now):")
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
    """The run output's words for a change applied to new rows only."""
    first = changed.strip().splitlines()[0].strip()
    return f"; query changed since the last run ({first}...): applied to new rows only"


def history_note(changed: str) -> str:
    """The userMetadata of the commit that records the new query."""
    return "query changed, applied to new rows only:\n" + changed


def _shown(value: Any) -> str:
    return "(unset)" if value is None else json.dumps(value)
