"""The always-on service's CPU while nothing lands: every process of its group (Python and the
JVM it started), user and system time read from /proc before and after a quiet spell."""

from __future__ import annotations

import os
import time

from python_runners.testing.logged_process import LoggedProcess

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
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group:  # fields from the state on: state, ppid, pgrp, ... utime, stime
            total += int(fields[11]) + int(fields[12])
    return total / TICKS_PER_SECOND
