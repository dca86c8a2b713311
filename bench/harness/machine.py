"""The machine, the versions and the code a benchmark ran on, for the report."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib.metadata import version
from pathlib import Path

from dbt_spark_streaming.java_runtime import JavaVersionError, choose_java
from python_runners import REPO_ROOT

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
                 + " (the project's session settings, adapter/dbt_spark_streaming/session.py)",
    }


def load_average() -> str:
    """Other processes on the machine slow every figure; the 1, 5 and 15 minute load says how much."""
    return "/".join(f"{load:.1f}" for load in os.getloadavg())


def spark_line(spark, lakehouse) -> str:
    """The session a benchmark measures in, as its first printed line says it."""
    return (f"spark {spark.version}, shuffle partitions {spark.conf.get('spark.sql.shuffle.partitions')}, "
            f"{os.cpu_count()} cores, load average {load_average()}; lakehouse {lakehouse.root} "
            "(wiped at start)")


def code_version() -> str:
    """The commit measured, and the runtime's files that differed from it when the run started."""
    def git(*arguments: str) -> str:
        try:
            return subprocess.run(["git", *arguments], cwd=REPO_ROOT, capture_output=True, text=True,
                                  timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    changed = [line.split(maxsplit=1)[-1]
               for line in git("status", "--porcelain", "--", "adapter/dbt_spark_streaming").splitlines()]
    return commit + (f" with uncommitted changes to {', '.join(changed)}" if changed else "")


def machine_section(run: dict) -> list[str]:
    """docs/BENCHMARKS.md's first section: where and when `make bench` measured."""
    machine = run["machine"]
    packages = ", ".join(f"{name} {version}" for name, version in machine["packages"].items())
    return [
        "## Machine and versions", "",
        f"- Run: {run['started_at']} (UTC), {run['duration_min']:.1f} min in all, "
        f"with `{run['command']}`",
        f"- CPU: {machine['cpu']}, {machine['cores']} cores; memory {machine['memory_gb']} GB; "
        f"{machine['os']}",
        f"- Load average (1/5/15 min) at start {run['load_start']}, at end {run['load_end']}",
        f"- Python {machine['python']}; Java: {machine['java']}", f"- {packages}",
        f"- Spark: {machine['spark']}", "",
    ]


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


def versions_tag() -> str:
    """`spark=<version> java=<version>`, the end of every summary line: figures from different
    versions are not comparable. The Java is the one sessions start on (its release file)."""
    try:
        java = choose_java().version_text
    except JavaVersionError:
        java = "unknown"
    return f"spark={version('pyspark')} java={java}"


def _java_version() -> str:
    try:
        shown = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    lines = (shown.stderr or shown.stdout).splitlines()
    return lines[0].strip() if lines else "unknown"
