"""silver_recordings' expectations (models/silver/silver_recordings.sql) in plain Python: which
recordings silver writes, which it warns about, drops and quarantines, worked out without Spark.

The generator counts its bad rows with these, and the tests, the recompute and the chaos audit
derive from them what silver, gold and the quarantine table must hold; tests/unit checks that
the model declares the same rules, in the same order, with the same actions. A rule passes only
when it is true: a missing value fails it, as null fails the SQL expression.
"""

from __future__ import annotations

import csv
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Optional

from python_runners import REPO_ROOT

LOWEST_PLAUSIBLE_HEARTBEAT = 20
HIGHEST_PLAUSIBLE_HEARTBEAT = 250
# The order in which a row failing several rules is handled by one of them.
STRONGEST_FIRST = ("fail", "quarantine", "drop", "warn")

Recording = Mapping  # a landed row (dict) or a Spark Row: both are read by column name


def _registered_devices() -> frozenset[int]:
    with open(REPO_ROOT / "seeds" / "devices.csv", encoding="utf-8") as seed:
        return frozenset(int(row["device_id"]) for row in csv.DictReader(seed) if row["device_model"])


REGISTERED_DEVICES = _registered_devices()


def heartbeat_plausible(row: Recording, now: float) -> bool:
    heartbeat = row["heartbeat"]
    return heartbeat is not None and LOWEST_PLAUSIBLE_HEARTBEAT <= heartbeat <= HIGHEST_PLAUSIBLE_HEARTBEAT


def device_known(row: Recording, now: float) -> bool:
    """The left join with the devices seed found the device (device_model is not null)."""
    return row["device_id"] in REGISTERED_DEVICES


def not_from_the_future(row: Recording, now: float) -> bool:
    """`now` stands for the batch's current_timestamp(): the generator's rows are either in the
    past or in 2100, so any moment since the batch decides as the batch did."""
    return row["time"] is not None and row["time"] <= now


@dataclass(frozen=True)
class Rule:
    name: str
    action: str
    passes: Callable[[Recording, float], bool]


# In the model's config order, which a quarantined row's _failed_expectations follows.
RULES = (
    Rule("heartbeat_plausible", "quarantine", heartbeat_plausible),
    Rule("device_known", "warn", device_known),
    Rule("not_from_the_future", "drop", not_from_the_future),
)


def failed_rules(row: Recording, now: Optional[float] = None) -> list[str]:
    now = time.time() if now is None else now
    return [rule.name for rule in RULES if not rule.passes(row, now)]


def action_on(row: Recording, now: Optional[float] = None) -> Optional[str]:
    """The strongest action of the rules the row fails; None when it passes them all."""
    failed = {rule.action for rule in RULES if rule.name in failed_rules(row, now)}
    return next((action for action in STRONGEST_FIRST if action in failed), None)


@dataclass(frozen=True)
class Checked:
    """Recordings as silver's expectations sort them."""

    kept: tuple  # written to silver, warned ones among them
    dropped: tuple
    quarantined: tuple
    failures: dict[str, int]  # rows failing each rule, in config order

    @property
    def warnings(self) -> dict[str, int]:
        """What the run output lists after 'warnings:': the warn rules that rows failed."""
        return {
            rule.name: self.failures[rule.name]
            for rule in RULES if rule.action == "warn" and self.failures[rule.name]
        }


def check(rows: Iterable[Recording], now: Optional[float] = None) -> Checked:
    now = time.time() if now is None else now
    kept, dropped, quarantined = [], [], []
    failures = dict.fromkeys((rule.name for rule in RULES), 0)
    for row in rows:
        for name in failed_rules(row, now):
            failures[name] += 1
        action = action_on(row, now)
        if action == "quarantine":
            quarantined.append(row)
        elif action == "drop":
            dropped.append(row)
        else:
            kept.append(row)  # passed every rule, or only a warn rule
    return Checked(tuple(kept), tuple(dropped), tuple(quarantined), failures)
