"""The machine and the versions a benchmark ran on, for the report."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib.metadata import version
from pathlib import Path

PACKAGES = ("pyspark", "delta-spark", "dbt-core", "dbt-spark", "sqlfluff")


def describe() -> dict:
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": _memory_gb(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "java": _java_version(),
        "packages": {package: version(package) for package in PACKAGES},
        "spark": "local[*], spark.sql.shuffle.partitions="
                 + os.environ.get("SPARK_SHUFFLE_PARTITIONS", "4")
                 + " (the project's session settings, python_runners/runtime/session.py)",
    }


def load_average() -> str:
    return "/".join(f"{load:.1f}" for load in os.getloadavg())


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _memory_gb() -> float | None:
    meminfo = Path("/proc/meminfo")
    if not meminfo.exists():
        return None
    for line in meminfo.read_text().splitlines():
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / 1024 / 1024, 1)
    return None


def _java_version() -> str:
    try:
        shown = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    lines = (shown.stderr or shown.stdout).splitlines()
    return lines[0].strip() if lines else "unknown"
