"""The warm driver: dbt commands attach to a running JVM (`dbt-spark-streaming driver start`, or
the service's) instead of starting their own, with the same tables as a run of its own.

Each test starts its driver in a lakehouse of its own (a Derby metastore admits one JVM) and
reads the Delta tables by path from the test's session."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt_spark_streaming.driver import driver_file
from dbt_spark_streaming.driver.attach import ATTACHED_SAID, REFUSED_SAID
from dbt_spark_streaming.lakehouse import Lakehouse
from python_runners.demo.data import land_batch, recordings_folder
from python_runners.testing import delta_log
from python_runners.testing.dbt_process import run_dbt_process
from python_runners.testing.pipeline_process import PipelineProcess
from python_runners.testing.separate_lakehouse import separate_lakehouse_env
from python_runners.testing.warm_driver import run_driver

SELECTED = ("--select", "+device_counts")  # bronze_recordings, silver_recordings, device_counts
TIMEOUT = 600  # a bound for a stuck run, not a speed target


@pytest.fixture
def warm(tmp_path):
    """A lakehouse with a warm driver started on it: (lakehouse, env)."""
    env = separate_lakehouse_env(tmp_path / "lakehouse")
    started = run_driver("start", env)
    assert started.returncode == 0, started.stdout + started.stderr
    lakehouse = Lakehouse.from_env(env)
    try:
        yield lakehouse, env
    finally:
        stopped = run_driver("stop", env)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr


def table(spark, lakehouse: Lakehouse, name: str):
    return spark.read.format("delta").load(f"{lakehouse.warehouse}/{name}")


def total_recordings(spark, lakehouse: Lakehouse) -> int:
    return table(spark, lakehouse, "gold.db/device_counts").groupBy().sum("total_recordings").first()[0] or 0


def assert_each_landed_once(spark, lakehouse: Lakehouse, batches) -> None:
    landed = sum(batch.records for batch in batches)
    bronze = table(spark, lakehouse, "bronze.db/bronze_recordings")
    assert bronze.count() == landed
    assert bronze.select("recording_id").distinct().count() == landed
    assert total_recordings(spark, lakehouse) == sum(batch.kept for batch in batches)


def test_an_attached_run_writes_the_same_tables_as_a_run_of_its_own(spark, warm, tmp_path):
    lakehouse, env = warm
    alone_env = separate_lakehouse_env(tmp_path / "alone")
    alone = Lakehouse.from_env(alone_env)
    for each in (lakehouse, alone):
        land_batch(recordings_folder(each), records=120, files=2)

    attached = run_dbt_process(["build", *SELECTED], env, tmp_path / "attached")
    on_its_own = run_dbt_process(["build", *SELECTED], alone_env, tmp_path / "alone_target")

    assert attached.returncode == 0, attached.stdout + attached.stderr
    assert ATTACHED_SAID in attached.stderr and "no JVM started" in attached.stderr
    assert on_its_own.returncode == 0 and ATTACHED_SAID not in on_its_own.stderr
    for name in ("bronze.db/bronze_recordings", "silver.db/silver_recordings", "gold.db/device_counts"):
        # where a file landed and when bronze took it differ by lakehouse and run; the rest may not
        mine, theirs = (table(spark, where, name).drop("source_file", "ingested_at") for where in (lakehouse, alone))
        assert mine.count() > 0
        assert mine.exceptAll(theirs).count() == 0 and theirs.exceptAll(mine).count() == 0, name


def test_two_attached_runs_at_once_each_write_every_row_once(spark, warm, tmp_path):
    lakehouse, env = warm
    seeded = run_dbt_process(["seed"], env, tmp_path / "seed")
    assert seeded.returncode == 0, seeded.stdout + seeded.stderr
    batches = [land_batch(recordings_folder(lakehouse), records=150, files=3)]
    runs = []
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        runs.append(PipelineProcess(["run", *SELECTED], env, tmp_path / name / "dbt.log"))
    for run in runs:
        assert run.wait(TIMEOUT) == 0, run.output()
        assert run.log_contains(ATTACHED_SAID)
    assert any(run.log_contains("waiting for process") for run in runs)  # one waited on the other's model
    assert_each_landed_once(spark, lakehouse, batches)
    status = run_driver("status", env)
    assert status.returncode == 0 and "0 command(s) attached now, 3 since it started" in status.stdout


def test_a_mismatched_driver_is_not_used_and_the_command_says_why(warm, tmp_path):
    lakehouse, env = warm
    record = driver_file.read(lakehouse.root)
    other = run_dbt_process(["run", *SELECTED], {**env, "SPARK_DRIVER_MEMORY": "3g"}, tmp_path / "other")
    assert other.returncode != 0
    assert (f"{REFUSED_SAID} (process {record.pid}): its JVM started with "
            "spark.driver.memory='4g', this command's would have '3g'") in other.stderr
    assert f"is in use by process {record.pid}" in other.stdout  # its own JVM: Derby is the driver's


def test_a_client_killed_mid_run_leaves_the_driver_serving_and_the_rerun_exact(spark, warm, tmp_path):
    lakehouse, env = warm
    batches = [land_batch(recordings_folder(lakehouse), records=100, files=1)]
    first = run_dbt_process(["build", *SELECTED], env, tmp_path / "first")
    assert first.returncode == 0, first.stdout + first.stderr

    batches.append(land_batch(recordings_folder(lakehouse), records=400, files=4))
    bronze = Path(lakehouse.warehouse) / "bronze.db" / "bronze_recordings"
    (tmp_path / "killed").mkdir()
    killed = PipelineProcess(["run", *SELECTED], env, tmp_path / "killed" / "dbt.log")
    # right after its batch's commit to bronze, before its checkpoint records the batch
    killed.kill_on_delta_commit(bronze, delta_log.latest_version(bronze), TIMEOUT)

    batches.append(land_batch(recordings_folder(lakehouse), records=50, files=1))
    rerun = run_dbt_process(["run", *SELECTED], env, tmp_path / "rerun")
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert ATTACHED_SAID in rerun.stderr  # the same driver, serving on
    assert_each_landed_once(spark, lakehouse, batches)


def test_an_attached_run_beside_the_service_and_dbt_show_and_test_on_it(spark, tmp_path):
    env = separate_lakehouse_env(tmp_path / "lakehouse")
    lakehouse = Lakehouse.from_env(env)
    batches = [land_batch(recordings_folder(lakehouse), records=100, files=1)]
    service = PipelineProcess(["build", *SELECTED, "--vars", "{stream_trigger: on_new_data}"], env,
                              tmp_path / "service.log")
    try:
        service.wait_for("the service's warm driver", lambda: driver_file.read(lakehouse.root) is not None, TIMEOUT)
        batches.append(land_batch(recordings_folder(lakehouse), records=80, files=2))
        attached = run_dbt_process(["run", *SELECTED], env, tmp_path / "attached")
        assert attached.returncode == 0, attached.stdout + attached.stderr
        assert f"{ATTACHED_SAID} of {lakehouse.root} (the service, process" in attached.stderr

        shown = run_dbt_process(["show", "--select", "device_counts", "--limit", "3"], env, tmp_path / "show")
        assert shown.returncode == 0, shown.stdout + shown.stderr
        assert "total_recordings" in shown.stdout
        tested = run_dbt_process(["test", "--select", "device_counts"], env, tmp_path / "test")
        assert tested.returncode == 0, tested.stdout + tested.stderr
        assert ATTACHED_SAID in tested.stderr and "ERROR=0" in tested.stdout and "PASS=0" not in tested.stdout

        batches.append(land_batch(recordings_folder(lakehouse), records=70, files=1))
        service.wait_for("the service's run of the newest batch",
                         lambda: total_recordings(spark, lakehouse) == sum(b.kept for b in batches), TIMEOUT, 0.5)
    finally:
        service.kill_tree()
    assert_each_landed_once(spark, lakehouse, batches)
    assert driver_file.read(lakehouse.root) is None  # the service was killed: its file is ignored
