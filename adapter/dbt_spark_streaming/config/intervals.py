"""Interval strings as Spark reads them for watermark delays and processing-time triggers.

Spark's interval parser takes a whole number of milliseconds, minutes, hours, days or weeks, and
a fractional number only of seconds ('1.5 minutes' is refused, '90 seconds' is not). One grammar
for every setting that takes an interval, so a value the config check accepts is one Spark runs.
"""

from __future__ import annotations

import re

_INTERVAL = re.compile(
    r"^\s*(\d+\s*(millisecond|minute|hour|day|week)s?|\d+(\.\d+)?\s*seconds?)\s*$", re.I
)
EXAMPLES = "'500 milliseconds', '2.5 seconds', '10 minutes', '1 hour', '1 day'"


def is_interval(value: object) -> bool:
    return isinstance(value, str) and bool(_INTERVAL.match(value))


_SECONDS_PER = {"millisecond": 0.001, "second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800}


def parse_duration_seconds(value: object) -> float | None:
    """An interval string as seconds; None when it is not one."""
    if not is_interval(value):
        return None
    number, unit = re.match(r"\s*([\d.]+)\s*([a-z]+?)s?\s*$", str(value), re.I).groups()
    return float(number) * _SECONDS_PER[unit.lower()]
