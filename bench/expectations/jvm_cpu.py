"""CPU seconds the driver's JVM has used, from /proc: on a shared machine a step's CPU moves far
less with the load than its wall time does."""

from __future__ import annotations

import os
from typing import Optional


def jvm_pid(spark) -> Optional[int]:
    try:
        return int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    except Exception:  # not a local JVM this process can see
        return None


def cpu_seconds(pid: Optional[int]) -> Optional[float]:
    """User and system CPU of process `pid` so far; None where /proc does not say."""
    if pid is None:
        return None
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_by_thread_kind(pid: Optional[int]) -> dict[str, float]:
    """CPU seconds so far per kind of JVM thread (task, gc, jit, other), from /proc's threads."""
    kinds: dict[str, float] = {}
    if pid is None:
        return kinds
    tick = os.sysconf("SC_CLK_TCK")
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kinds
    for thread in threads:
        try:
            stat = open(f"/proc/{pid}/task/{thread}/stat").read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        kind = ("task" if name.startswith("Executor task") else
                "gc" if name.startswith(("GC Thread", "G1 ", "VM Thread")) else
                "jit" if "Compiler" in name else "other")
        kinds[kind] = kinds.get(kind, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return kinds
