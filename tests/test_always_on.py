"""processing_time triggers: `dbt run` keeps serving until SIGTERM, which stops cleanly.

This runs dbt as a separate process, as a user would, with its own lakehouse (a Derby metastore
admits one JVM at a time); the test reads the Delta tables by path.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from python_runners.demo.data import land_batch, recordings_folder
from python_runners.runtime.lakehouse import REPO_ROOT, Lakehouse

pytestmark = pytest.mark.always_on
DBT = str(Path(sys.executable).with_name("dbt"))
# Every model under models/ is a streaming table: each keeps its query running.
SERVING = f"Serving {len(list((REPO_ROOT / 'models').rglob('*.sql')))} streaming queries"
TIMEOUT = 600  # a bound for a stuck run, not a speed target: 9 models on a busy 2-core machine


@pytest.fixture
def own_lakehouse(tmp_path):
    env = {**os.environ, "LAKEHOUSE_DIR": str(tmp_path / "lakehouse"), "SPARK_SHUFFLE_PARTITIONS": "2"}
    return Lakehouse.from_env(env), env


class Output:
    """A process's output lines, read on a thread so that waiting for one can time out."""

    def __init__(self, process: subprocess.Popen):
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, args=(process,), daemon=True).start()

    def _pump(self, process: subprocess.Popen) -> None:
        for line in process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, marker: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while True:
            line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if line is None:
                raise AssertionError(f"dbt exited before {marker!r}:\n{self.text()}")
            self.seen.append(line)
            if marker in line:
                return

    def rest(self) -> str:
        while (line := self.lines.get(timeout=TIMEOUT)) is not None:
            self.seen.append(line)
        return self.text()

    def text(self) -> str:
        return "".join(self.seen)


def dbt_process(env, tmp_path, command: str, *args) -> subprocess.Popen:
    command = [
        DBT, command, *args, "--project-dir", str(REPO_ROOT),
        "--profiles-dir", str(REPO_ROOT / "profiles"),
        "--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs"),
    ]
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def total_recordings(spark, lakehouse: Lakehouse) -> int:
    path = f"{lakehouse.warehouse}/gold.db/device_counts"
    return spark.read.format("delta").load(path).groupBy().sum("total_recordings").first()[0] or 0


def test_processing_time_serves_new_data_until_sigterm_then_resumes(spark, own_lakehouse, tmp_path):
    lakehouse, env = own_lakehouse
    folder = recordings_folder(lakehouse)
    landed = land_batch(folder, records=100, files=1).records

    serving = dbt_process(env, tmp_path, "build", "--vars", "{stream_trigger: '1 second'}")
    output = Output(serving)
    try:
        output.wait_for(SERVING)
        assert total_recordings(spark, lakehouse) == landed  # caught up before serving

        landed += land_batch(folder, records=60, files=1).records
        wait_for(lambda: total_recordings(spark, lakehouse) == landed, "the new batch in gold")

        serving.send_signal(signal.SIGTERM)
        output.rest()
        serving.wait(timeout=TIMEOUT)
    finally:
        if serving.poll() is None:
            serving.kill()
    assert serving.returncode == 0, output.text()

    landed += land_batch(folder, records=30, files=1).records
    resumed = dbt_process(env, tmp_path, "run")
    rest, _ = resumed.communicate(timeout=TIMEOUT)
    assert resumed.returncode == 0, rest

    bronze = spark.read.format("delta").load(f"{lakehouse.warehouse}/bronze.db/bronze_recordings")
    assert bronze.count() == landed
    assert bronze.select("recording_id").distinct().count() == landed
    assert total_recordings(spark, lakehouse) == landed
