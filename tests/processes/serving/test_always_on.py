"""processing_time triggers: `dbt run` keeps serving until SIGTERM, which stops cleanly.

This runs dbt as a separate process, as a user would, with its own lakehouse (a Derby metastore
admits one JVM at a time); the test reads the Delta tables by path. It serves the models from the
landing to gold's device_counts (and the seed silver joins); serving the whole demo is the chaos
test's.
"""

from __future__ import annotations

import signal

import pytest

from python_runners.demo.data import land_batch, recordings_folder
from dbt_spark_streaming.lakehouse import Lakehouse
from python_runners.testing.pipeline_process import PipelineProcess
from python_runners.testing.separate_lakehouse import separate_lakehouse_env

pytestmark = pytest.mark.always_on
SELECTED = ("--select", "+device_counts")  # bronze_recordings, silver_recordings, device_counts
SERVING = "Serving 3 streaming queries"
TIMEOUT = 600  # a bound for a stuck run, not a speed target


@pytest.fixture
def own_lakehouse(tmp_path):
    env = separate_lakehouse_env(tmp_path / "lakehouse")
    return Lakehouse.from_env(env), env


def total_recordings(spark, lakehouse: Lakehouse) -> int:
    path = f"{lakehouse.warehouse}/gold.db/device_counts"
    return spark.read.format("delta").load(path).groupBy().sum("total_recordings").first()[0] or 0


def kept(batches) -> int:
    """What gold counts: the records silver's expectations neither quarantine nor drop."""
    return sum(batch.kept for batch in batches)


def test_processing_time_serves_new_data_until_sigterm_then_resumes(spark, own_lakehouse, tmp_path):
    lakehouse, env = own_lakehouse
    folder = recordings_folder(lakehouse)
    batches = [land_batch(folder, records=100, files=1)]

    serving = PipelineProcess(
        ["build", *SELECTED, "--vars", "{stream_trigger: '1 second'}"], env, tmp_path / "build.log"
    )
    try:
        serving.wait_for_log(SERVING, TIMEOUT)
        assert total_recordings(spark, lakehouse) == kept(batches)  # caught up before serving

        batches.append(land_batch(folder, records=60, files=1))
        serving.wait_for("the new batch in gold", lambda: total_recordings(spark, lakehouse) == kept(batches),
                         TIMEOUT, interval=0.5)

        serving.process.send_signal(signal.SIGTERM)
        serving.wait(TIMEOUT)
    finally:
        serving.kill_if_running()
    assert serving.process.returncode == 0, serving.output()

    batches.append(land_batch(folder, records=30, files=1))
    resumed = PipelineProcess(["run", *SELECTED], env, tmp_path / "run.log")
    assert resumed.wait(TIMEOUT) == 0, resumed.output()

    landed = sum(batch.records for batch in batches)
    bronze = spark.read.format("delta").load(f"{lakehouse.warehouse}/bronze.db/bronze_recordings")
    assert bronze.count() == landed
    assert bronze.select("recording_id").distinct().count() == landed
    assert total_recordings(spark, lakehouse) == kept(batches)
