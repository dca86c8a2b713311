"""The always-on service's CPU while nothing lands: every process of its group (Python and the
JVM it started), user and system time read from /proc before and after a quiet spell."""

from __future__ import annotations

import os
import time

from python_runners.testing.logged_process import LoggedProcess, group_stats

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def idle_cpu_pct(process: LoggedProcess, seconds: float) -> float:
    """CPU seconds the process group used over `seconds` of wall time, as a percentage of one
    core (100 = one core busy the whole time)."""
    group = process.process.pid
    before, started = group_cpu_seconds(group), time.monotonic()
    time.sleep(seconds)
    used, elapsed = group_cpu_seconds(group) - before, time.monotonic() - started
    return 100 * used / elapsed


def group_cpu_seconds(group: int) -> float:
    return sum(int(fields[11]) + int(fields[12]) for _pid, fields in group_stats(group)) / TICKS_PER_SECOND
