"""A model's expectations: rules every output row is checked against as it is written.

Each has a name, a SQL boolean expression over the model's output row and an action for a row
that fails it (after Lakeflow's expectations, whose names carry over):

- warn: the row is written, and counted;
- drop: the row is left out, and counted;
- quarantine: the row is left out and written, with the names of every expectation it failed, to
  the model's quarantine table (`<model>__quarantine` beside it, or `quarantine_table`);
- fail: the batch stops before any of it is written, naming the expectation and a failing row.

A row passes only when the expression is true: false or null fails it (`device_id is null or
...` lets nulls through). A row that fails several is handled by the strongest action: fail, then
quarantine, then drop, then warn. Read from the model's config without Spark; `check_resolves`
checks each expression against the query's columns when the model's stream view is created,
before any table or checkpoint is touched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from dbt_spark_streaming.config.names import is_identifier
from dbt_spark_streaming.errors import ConfigError

ACTIONS = ("warn", "drop", "quarantine", "fail")
QUARANTINE_SUFFIX = "__quarantine"
# The quarantine table's columns beside the model's own.
FAILED_COLUMN = "_failed_expectations"
QUARANTINED_AT_COLUMN = "_quarantined_at"
# The counts of a batch, in its progress's observedMetrics under OBSERVATION: rows checked, rows
# left out by drop rules, rows quarantined, and per rule its failures as '<action>:<name>'.
OBSERVATION = "expectations"
ROWS_CHECKED = "rows"
ROWS_DROPPED = "dropped"
ROWS_QUARANTINED = "quarantined"
_KEYS = ("name", "expression", "action")
_KEY_LOOKALIKES = {
    "expr": "expression", "condition": "expression", "constraint": "expression", "check": "expression",
    "rule": "expression", "sql": "expression", "on_violation": "action", "on_failure": "action",
    "mode": "action", "description": "name",
}
_ACTION_LOOKALIKES = {
    "warning": "warn", "expect": "warn", "keep": "warn", "drop_row": "drop", "filter": "drop",
    "skip": "drop", "fail_update": "fail", "error": "fail", "raise": "fail", "stop": "fail",
    "quarantined": "quarantine",
}


class ExpectationConfigError(ConfigError):
    pass


@dataclass(frozen=True)
class Expectation:
    name: str
    expression: str
    action: str = "warn"

    def documented(self) -> str:
        return f"{self.name} ({self.action}): {self.expression}"


@dataclass(frozen=True)
class Expectations:
    model: str
    rules: tuple[Expectation, ...] = ()
    quarantine_table_name: Optional[str] = None  # as configured; None: <model>__quarantine

    @classmethod
    def from_config(cls, model: str, config: Mapping[str, Any]) -> "Expectations":
        configured = config.get("expectations")
        if configured in (None, [], (), {}):
            rules: tuple[Expectation, ...] = ()
        elif isinstance(configured, (list, tuple)):
            rules = tuple(_expectation(model, index, item) for index, item in enumerate(configured))
        else:
            raise ExpectationConfigError(
                f"Model {model}: expectations must be a list, each item with a name, an "
                "expression and an action, e.g. expectations=[{'name': 'heartbeat_plausible', "
                "'expression': 'heartbeat between 20 and 250', 'action': 'drop'}]."
            )
        names = [rule.name.lower() for rule in rules]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ExpectationConfigError(
                f"Model {model}: expectation name {repeated[0]!r} is used more than once; each "
                "expectation needs a name of its own (its counts are kept under it)."
            )
        quarantine = config.get("quarantine_table")
        if quarantine is not None and not _is_table_name(quarantine):
            raise ExpectationConfigError(
                f"Model {model}: quarantine_table {quarantine!r} is not a table name; give a "
                "name (kept in the model's schema) or schema.name, e.g. "
                f"quarantine_table='{model}__rejected'."
            )
        if quarantine is not None and not any(rule.action == "quarantine" for rule in rules):
            raise ExpectationConfigError(
                f"Model {model}: quarantine_table is set but no expectation has action "
                "'quarantine', so nothing would be written to it. Give an expectation "
                "action='quarantine', or remove quarantine_table."
            )
        return cls(model, rules, quarantine)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def with_action(self, *actions: str) -> tuple[Expectation, ...]:
        return tuple(rule for rule in self.rules if rule.action in actions)

    @property
    def quarantines(self) -> bool:
        return any(rule.action == "quarantine" for rule in self.rules)

    def quarantine_table(self, table: str) -> Optional[str]:
        """The quarantine table beside the model's `table` (schema.name), if any expectation
        quarantines."""
        if not self.quarantines:
            return None
        schema, _, name = table.replace("`", "").rpartition(".")
        configured = self.quarantine_table_name
        if configured is None:
            configured = f"{name}{QUARANTINE_SUFFIX}"
        if "." in configured or not schema:
            return configured
        return f"{schema}.{configured}"

    def documented(self) -> dict[str, str]:
        """Table properties `dbt docs generate` shows (catalog.py)."""
        if not self.rules:
            return {}
        return {"expectations": "; ".join(rule.documented() for rule in self.rules)}


@dataclass(frozen=True)
class ExpectationCount:
    """One expectation's outcome in one batch."""

    name: str
    action: str
    rows_checked: int
    rows_failed: int


@dataclass(frozen=True)
class ExpectationCounts:
    rows_checked: int = 0
    rows_dropped: int = 0  # left out by drop rules (and not quarantined)
    rows_quarantined: int = 0
    rules: tuple[ExpectationCount, ...] = ()

    @classmethod
    def from_metrics(cls, metrics: Any) -> "ExpectationCounts":
        if not isinstance(metrics, Mapping):
            return cls()
        checked = _whole(metrics.get(ROWS_CHECKED))
        rules = []
        for key, value in metrics.items():
            action, separator, name = str(key).partition(":")
            if separator:
                rules.append(ExpectationCount(name, action, checked, _whole(value)))
        return cls(
            rows_checked=checked,
            rows_dropped=_whole(metrics.get(ROWS_DROPPED)),
            rows_quarantined=_whole(metrics.get(ROWS_QUARANTINED)),
            rules=tuple(rules),
        )

    def __bool__(self) -> bool:
        return bool(self.rules)

    def plus(self, other: "ExpectationCounts") -> "ExpectationCounts":
        """Both batches' counts, each rule's summed by name (in the order first seen)."""
        totals: dict[tuple[str, str], ExpectationCount] = {}
        for rule in (*self.rules, *other.rules):
            seen = totals.get((rule.name, rule.action))
            totals[(rule.name, rule.action)] = rule if seen is None else ExpectationCount(
                rule.name, rule.action, seen.rows_checked + rule.rows_checked,
                seen.rows_failed + rule.rows_failed,
            )
        return ExpectationCounts(
            self.rows_checked + other.rows_checked,
            self.rows_dropped + other.rows_dropped,
            self.rows_quarantined + other.rows_quarantined,
            tuple(totals.values()),
        )

    def warned(self) -> tuple[ExpectationCount, ...]:
        return tuple(rule for rule in self.rules if rule.action == "warn" and rule.rows_failed)


def expectations_said(counts: ExpectationCounts) -> str:
    """', 2 dropped and 1 quarantined by expectations, warnings: device_known 4'; '' without."""
    if not counts:
        return ""
    left_out = [f"{number} {verb}" for number, verb in (
        (counts.rows_dropped, "dropped"), (counts.rows_quarantined, "quarantined")
    ) if number]
    said = f", {' and '.join(left_out)} by expectations" if left_out else ", no row left out by expectations"
    warned = counts.warned()
    if warned:
        said += ", warnings: " + ", ".join(f"{rule.name} {rule.rows_failed}" for rule in warned)
    return said


def _whole(value: Any) -> int:
    return 0 if value is None else int(value)


def _expectation(model: str, index: int, item: Any) -> Expectation:
    example = ("{'name': 'heartbeat_plausible', 'expression': 'heartbeat between 20 and 250', "
               "'action': 'drop'}")
    if not isinstance(item, Mapping):
        raise ExpectationConfigError(
            f"Model {model}: expectation {index + 1} ({item!r}) is not a mapping; give each "
            f"expectation a name, an expression and an action, e.g. {example}."
        )
    label = f"expectation {item.get('name')!r}" if item.get("name") else f"expectation {index + 1}"
    for key in item:
        if key in _KEYS:
            continue
        meant = _KEY_LOOKALIKES.get(str(key).lower())
        hint = f"; did you mean {meant!r}?" if meant and meant not in item else "."
        raise ExpectationConfigError(
            f"Model {model}: {label} has {key!r}, which is not an expectation setting{hint} "
            f"Each expectation takes name, expression and action (warn, drop, quarantine or "
            f"fail), e.g. {example}."
        )
    name = item.get("name")
    if not is_identifier(name):
        raise ExpectationConfigError(
            f"Model {model}: {label} needs a name of letters, digits and underscores (its counts "
            f"are kept under it, and a quarantined row lists it), e.g. 'heartbeat_plausible'; "
            f"got {name!r}."
        )
    expression = item.get("expression")
    if not isinstance(expression, str) or not expression.strip():
        raise ExpectationConfigError(
            f"Model {model}: expectation {name!r} needs an expression, a SQL condition over the "
            "model's output columns that a good row makes true, e.g. "
            "'heartbeat between 20 and 250'."
        )
    action = str(item.get("action") or "warn").lower()
    if action not in ACTIONS:
        meant = _ACTION_LOOKALIKES.get(action)
        hint = f" Did you mean {meant!r}?" if meant else ""
        raise ExpectationConfigError(
            f"Model {model}: expectation {name!r} has action {item.get('action')!r}, which is not "
            f"one of warn (keep the row, count it), drop (leave it out, count it), quarantine "
            f"(leave it out, write it to the quarantine table) or fail (stop before the batch "
            f"is written).{hint}"
        )
    return Expectation(name=name, expression=expression.strip(), action=action)


def _is_table_name(value: Any) -> bool:
    return isinstance(value, str) and all(is_identifier(part) for part in value.split(".")) and (
        1 <= len(value.split(".")) <= 2
    )


def metric_name(rule: Expectation) -> str:
    """A rule's failure count in a batch's observedMetrics, saying its action too."""
    return f"{rule.action}:{rule.name}"
