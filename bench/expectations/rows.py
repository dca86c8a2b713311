"""The expectations benchmark's source rows and rules, and what each variant must write.

Rows are recordings made from their id, so which rows break which rule is known in Python: in
every 100 ids one has an implausible heartbeat (0), one no time, one a time in 2100; in every 200
one an unknown device. The fail rule (`id is not null`) no row breaks.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbt_spark_streaming.config.expectations import Expectations

START = 1767225600  # 2026-01-01, epoch seconds
FUTURE = 4102444800  # 2100-01-01
SOURCE_COLUMNS = ("id", "device_id", "heartbeat", "time", "ward", "note")

RULES = (
    {"name": "heartbeat_plausible", "expression": "heartbeat between 20 and 250", "action": "warn"},
    {"name": "device_known", "expression": "device_id like 'device-%'", "action": "warn"},
    {"name": "time_recorded", "expression": "time is not null", "action": "drop"},
    {"name": "id_present", "expression": "id is not null", "action": "fail"},
    {"name": "not_from_the_future", "expression": f"time is null or time < timestamp_seconds({FUTURE})",
     "action": "quarantine"},
)
QUARANTINE_RULE = "not_from_the_future"


def _breaks(rule: str, row_id: int) -> bool:
    return {
        "heartbeat_plausible": row_id % 100 == 0,
        "device_known": row_id % 200 == 7,
        "time_recorded": row_id % 100 == 13,
        "id_present": False,
        "not_from_the_future": row_id % 100 == 42,
    }[rule]


def source_sql(rows: int) -> str:
    """A query that makes the `rows` recordings."""
    return f"""
        select id,
               case when id % 200 = 7 then 'unknown' else concat('device-', id % 500) end as device_id,
               cast(case when id % 100 = 0 then 0 else 40 + id % 120 end as double) as heartbeat,
               case when id % 100 = 13 then null
                    when id % 100 = 42 then timestamp_seconds({FUTURE} + id)
                    else timestamp_seconds({START} + id) end as time,
               concat('ward-', id % 20) as ward,
               concat('monitor ', id % 1000, ', firmware 4.', id % 7) as note
        from range({rows})
    """


@dataclass(frozen=True)
class Variant:
    name: str
    rules: tuple[dict, ...]

    def expectations(self, model: str) -> Expectations:
        return Expectations.from_config(model, {"expectations": list(self.rules)})


NONE = Variant("none", ())
FIVE = Variant("five", RULES)
# The same five rules with the quarantine rule a drop rule: the same rows reach the table, with
# no quarantine table, so the difference to FIVE is the quarantine's own cost.
FIVE_WITHOUT_QUARANTINE = Variant("five_without_quarantine", tuple(
    {**rule, "action": "drop"} if rule["name"] == QUARANTINE_RULE else rule for rule in RULES
))
VARIANTS = (NONE, FIVE, FIVE_WITHOUT_QUARANTINE)


@dataclass(frozen=True)
class Expected:
    """What one batch of the source must give under a variant."""

    table_rows: int
    table_id_sum: int
    quarantined_rows: int
    quarantined_id_sum: int
    metrics: dict  # the batch's observedMetrics["expectations"], as from_metrics reads them


def expected(variant: Variant, rows: int) -> Expected:
    actions = {rule["name"]: rule["action"] for rule in variant.rules}
    failures = {name: 0 for name in actions}
    table = table_sum = quarantined = quarantined_sum = dropped = 0
    for row_id in range(rows):
        broken = {name for name in actions if _breaks(name, row_id)}
        for name in broken:
            failures[name] += 1
        taken = {actions[name] for name in broken}
        if "quarantine" in taken:
            quarantined, quarantined_sum = quarantined + 1, quarantined_sum + row_id
        elif "drop" in taken:
            dropped += 1
        else:
            table, table_sum = table + 1, table_sum + row_id
    metrics = {} if not variant.rules else {
        "rows": rows, "dropped": dropped, "quarantined": quarantined,
        **{f"{actions[name]}:{name}": count for name, count in failures.items()},
    }
    return Expected(table, table_sum, quarantined, quarantined_sum, metrics)
