"""One run at a time per lakehouse: a second run is refused at once, a dead run's lock is not."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from dbt_spark_streaming import run_lock
from python_runners.testing.dbt_process import run_dbt_process


def run_python(code: str) -> subprocess.CompletedProcess:
    """`python -c <code>` in a process of its own, to the end, its output captured."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_second_dbt_run_on_a_busy_lakehouse_fails_fast_naming_the_holder(spark, tmp_path):
    # this test process holds the suite's lakehouse (its Spark session is up): conftest's LAKEHOUSE_DIR
    second = run_dbt_process(["run"], os.environ, tmp_path / "target")

    assert second.returncode != 0
    assert f"is in use by process {os.getpid()}" in second.stdout
    assert "Only one run at a time" in second.stdout
    assert "Derby" not in second.stdout  # refused before a JVM was started


def test_lock_left_by_a_killed_process_is_stale_and_taken_over(tmp_path):
    root = tmp_path / "lakehouse"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from dbt_spark_streaming import run_lock;"
         f"run_lock.acquire({str(root)!r}); print('held', flush=True); time.sleep(600)"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        busy = run_python(f"from dbt_spark_streaming import run_lock; run_lock.acquire({str(root)!r})")
        assert busy.returncode != 0 and f"in use by process {holder.pid}" in busy.stderr
    finally:
        holder.kill()  # SIGKILL: no chance to release anything
        holder.wait()

    taken_over = run_python(
        "import json; from dbt_spark_streaming import run_lock;"
        f"print(json.dumps(run_lock.acquire({str(root)!r})))"
    )
    assert taken_over.returncode == 0, taken_over.stderr
    assert json.loads(taken_over.stdout)["pid"] == holder.pid  # the dead holder, reported


def test_lock_is_released_on_a_clean_exit(tmp_path):
    root = str(tmp_path / "lakehouse")
    for _ in range(2):
        run = run_python(f"from dbt_spark_streaming import run_lock; print(run_lock.acquire({root!r}))")
        assert run.returncode == 0 and run.stdout.strip() == "None", run.stderr
    assert run_lock.LOCK_FILE in os.listdir(root)


def test_threads_of_one_run_all_hold_the_lock_their_process_took(tmp_path):
    # dbt's worker threads (`--threads 4`) reach their first models at the same moment
    root = str(tmp_path / "lakehouse")
    claim = (
        "import threading; from dbt_spark_streaming import run_lock\n"
        "start, failures = threading.Barrier(8), []\n"
        "def take():\n"
        "    start.wait()\n"
        "    try: run_lock.acquire(%r)\n"
        "    except run_lock.LakehouseBusyError as busy: failures.append(str(busy))\n"
        "threads = [threading.Thread(target=take) for _ in range(8)]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "print(len(failures))\n" % root
    )
    for _ in range(5):  # a race: several tries
        run = run_python(claim)
        assert run.returncode == 0 and run.stdout.strip() == "0", run.stdout + run.stderr
