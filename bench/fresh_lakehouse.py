"""A lakehouse of the benchmark's own under .lakehouse/bench, emptied at every start."""

from __future__ import annotations

import os
import shutil

from python_runners import run_lock
from python_runners.lakehouse import REPO_ROOT, ROOT_VARIABLE

BENCH_LAKEHOUSE = REPO_ROOT / ".lakehouse" / "bench"


def use_fresh_bench_lakehouse() -> str:
    """Point LAKEHOUSE_DIR at an empty bench folder; call before python_runners.session builds a session.

    The lakehouse's run lock is taken first, so a second benchmark started meanwhile stops with
    the usual "in use" message instead of wiping the folder under the first one.
    """
    run_lock.acquire(str(BENCH_LAKEHOUSE))
    for entry in BENCH_LAKEHOUSE.iterdir():
        if entry.name == run_lock.LOCK_FILE:
            continue
        if entry.is_dir():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    os.environ[ROOT_VARIABLE] = str(BENCH_LAKEHOUSE)
    return str(BENCH_LAKEHOUSE)
