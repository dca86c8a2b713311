"""What a streaming model's table is written with: its compiled SQL and the settings that shape
its rows, recorded as table properties and compared on the next run; and the model's
`on_query_change` policy for a difference (lifecycle/query_changes.py applies it)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from dbt_spark_streaming.config import query_diff
from dbt_spark_streaming.config.materializations import REDEPLOYABLE_MATERIALIZATIONS
from dbt_spark_streaming.errors import ConfigError

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


class QueryChangeConfigError(ConfigError):
    pass


def policy_from_config(model: str, value: Any, materialized: str = "streaming_table") -> str:
    if value in (None, ""):
        return DEFAULT_POLICY
    if value not in POLICIES:
        raise QueryChangeConfigError(
            f"Model {model}: on_query_change is {value!r}; use one of {', '.join(map(repr, POLICIES))}."
        )
    if value == "redeploy" and materialized not in REDEPLOYABLE_MATERIALIZATIONS:
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
        return hashlib.sha256(f"{query_diff.words(self.sql)}\n{self.settings}".encode()).hexdigest()[:16]

    def properties(self) -> dict[str, str]:
        return {FINGERPRINT: self.fingerprint, SQL: self.sql, SETTINGS: self.settings}

    def changes_since(self, recorded: Mapping[str, str]) -> Optional[str]:
        """What changed since the version recorded in a table's properties, a short line per
        changed setting (an expectation added, removed or changed by name; a value before and
        now) and the SQL's changed lines; None when nothing did, or nothing was recorded (a
        table older than this check). No line is longer than query_diff.LINE_WIDTH."""
        before = recorded.get(FINGERPRINT)
        if before is None or before == self.fingerprint:
            return None
        lines = []
        old_settings, new_settings = json.loads(recorded.get(SETTINGS) or "{}"), json.loads(self.settings)
        for key in sorted(set(old_settings) | set(new_settings)):
            old, new = (settings.get(key, _DEFAULTS.get(key)) for settings in (old_settings, new_settings))
            if old != new:
                parts = query_diff.setting_change(old, new)
                line = f"  {key}: {'; '.join(parts)}"
                # too long for a line: each rule (column, field) added, removed or changed on its own
                if len(line) <= query_diff.LINE_WIDTH or len(parts) == 1:
                    lines.append(query_diff.cut(line))
                else:
                    lines += [f"  {key}:", *(query_diff.cut(query_diff.PART_INDENT + part) for part in parts)]
        old_sql = recorded.get(SQL) or ""
        diff = [] if query_diff.words(old_sql) == query_diff.words(self.sql) else query_diff.sql_diff(old_sql, self.sql)
        if diff:
            lines.append(f"  {query_diff.SQL_HEADER}")
            lines += diff[:query_diff.DIFF_LINES_SHOWN]
            if len(diff) > query_diff.DIFF_LINES_SHOWN:
                lines.append(f"  ... {len(diff) - query_diff.DIFF_LINES_SHOWN} more changed lines")
        return "\n".join(lines) or "  the query's layout only"

