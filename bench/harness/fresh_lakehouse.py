"""Lakehouses of the benchmarks' own under .lakehouse/bench/<name>, emptied at every start."""

from __future__ import annotations

import shutil
from pathlib import Path

from dbt_spark_streaming import run_lock
from python_runners import REPO_ROOT
from python_runners.testing.separate_lakehouse import use_separate_lakehouse

BENCH_ROOT = REPO_ROOT / ".lakehouse" / "bench"


def bench_folder(name: str) -> Path:
    return BENCH_ROOT / name


def empty_folder(name: str) -> Path:
    """An empty .lakehouse/bench/<name>, for a benchmark step that a child process will use."""
    folder = bench_folder(name)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


def use_fresh_bench_lakehouse(name: str) -> str:
    """Point LAKEHOUSE_DIR at an empty bench folder; call before dbt_spark_streaming.session builds a session.

    The lakehouse's run lock is taken first, so a second benchmark started meanwhile stops with
    the usual "in use" message instead of wiping the folder under the first one.
    """
    folder = bench_folder(name)
    folder.mkdir(parents=True, exist_ok=True)
    run_lock.acquire(str(folder))
    for entry in folder.iterdir():
        if entry.name == run_lock.LOCK_FILE:
            continue
        if entry.is_dir():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    use_separate_lakehouse(folder)
    return str(folder)


def fresh_session(name: str, extra_conf: dict[str, str] | None = None):
    """The project's Spark session on an empty .lakehouse/bench/<name> (with `extra_conf` over
    the session's settings), and that Lakehouse."""
    use_fresh_bench_lakehouse(name)
    # Imported only now, so nothing can build a session before LAKEHOUSE_DIR points at the bench.
    from dbt_spark_streaming.lakehouse import Lakehouse
    from dbt_spark_streaming.session import get_or_create_session

    lakehouse = Lakehouse.from_env()
    return get_or_create_session(lakehouse, extra_conf=extra_conf), lakehouse
