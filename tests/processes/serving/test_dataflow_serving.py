"""The service's default, on_new_data: a model runs when one of its inputs has committed.

Each test runs `python -m python_runners service start` as a process of its own on a lakehouse
of its own (the embedded metastore admits one process) and reads the Delta tables by path.
- After a plain `dbt build`, the service's switch to on_new_data runs no model; a landing flows
  bronze -> silver -> gold without a trigger, every row exactly once; a model whose inputs did
  not change runs no batch; a stop in the middle of a wave, and a restart, loses
  nothing and duplicates nothing.
- A windowed aggregate in append mode emits its window once the watermark passes it, with
  nothing more landing (the run after the one that moved the watermark, without data).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.progress.status_file import status_path
from python_runners.demo.data import land_batch, land_status_reports, recordings_folder, status_folder
from python_runners.testing import delta_log
from python_runners.testing.pipeline_process import PipelineProcess
from python_runners.testing.landing import land_json_lines, landing_folder
from python_runners.testing.separate_lakehouse import separate_lakehouse_env
from python_runners.testing.service_process import ServiceProcess
from streaming_projects import write_streaming_project

pytestmark = pytest.mark.always_on
TIMEOUT = 600  # a bound for a stuck run, not a speed target
RECORDINGS = ("bronze_recordings", "silver_recordings", "device_counts")
STATUS = ("bronze_device_status", "silver_device_status")


def table(lakehouse: Lakehouse, schema: str, model: str) -> str:
    return f"{lakehouse.warehouse}/{schema}.db/{model}"


def total_recordings(spark, lakehouse: Lakehouse) -> int:
    gold = spark.read.format("delta").load(table(lakehouse, "gold", "device_counts"))
    return gold.groupBy().sum("total_recordings").first()[0] or 0


def committed_batches(lakehouse: Lakehouse, schema: str, model: str) -> int:
    commits = Path(lakehouse.checkpoint_path(f"{schema}/{model}").removeprefix("file:")) / "commits"
    return len([path for path in commits.iterdir() if path.name.isdigit()])


def served_state(lakehouse: Lakehouse) -> dict:
    status = json.loads(status_path(lakehouse).read_text())
    return {query["name"].split(".")[-1]: query for query in status["queries"]}


def test_a_landing_flows_to_gold_once_idle_models_run_nothing_and_a_stop_mid_wave_loses_nothing(
    spark, tmp_path
):
    env = separate_lakehouse_env(tmp_path / "lakehouse")
    lakehouse = Lakehouse.from_env(env)
    recordings, status = recordings_folder(lakehouse), status_folder(lakehouse)
    batches = [land_batch(recordings, records=100, files=1)]
    land_status_reports(1, status)
    bronze = table(lakehouse, "bronze", "bronze_recordings")
    select = ["--select", "+device_counts", "+silver_device_status"]
    # A plain `dbt build` (availableNow) first: the service that follows switches the trigger.
    built = PipelineProcess(["build", "--select", "devices", *select[1:], "--exclude-resource-type", "test",
                             "--exclude-resource-type", "unit_test"], env, tmp_path / "build.log")
    assert built.wait(TIMEOUT) == 0, built.output()
    assert total_recordings(spark, lakehouse) == sum(b.kept for b in batches)

    service = ServiceProcess(select, env, tmp_path / "serve.log", TIMEOUT)
    try:
        service.wait_for_log("Serving ", TIMEOUT)
        assert "5 of them run each time an input commits" in service.output()
        # nothing landed since the build: the switch to on_new_data runs no model
        lines = [line for line in service.output().splitlines() if " OK created sql streaming_table model " in line]
        assert len(lines) == 5 and all("UP TO DATE, 0 rows in" in line for line in lines), service.output()

        # One landing reaches gold through the three hops, by commits alone (no trigger).
        batches.append(land_batch(recordings, records=60, files=1))
        service.wait_for("the landing in gold",
                         lambda: total_recordings(spark, lakehouse) == sum(b.kept for b in batches),
                         TIMEOUT, interval=0.2)

        # A status report runs the status models only: the recordings' inputs did not change.
        before = {model: committed_batches(lakehouse, schema, model)
                  for model, schema in zip(RECORDINGS, ("bronze", "silver", "gold"))}
        silver_status = table(lakehouse, "silver", "silver_device_status")
        reports = reports_in(spark, silver_status)
        land_status_reports(2, status)
        service.wait_for("the report in silver", lambda: reports_in(spark, silver_status) > reports, TIMEOUT)
        assert {model: committed_batches(lakehouse, schema, model)
                for model, schema in zip(RECORDINGS, ("bronze", "silver", "gold"))} == before
        served = served_state(lakehouse)
        assert served["device_counts"]["state"] == "waiting for new data"
        assert served["device_counts"]["runs"] >= 1 and served["device_counts"]["lag_seconds"] == 0

        # Stopped in the middle of a wave: bronze has the landing, gold does not yet.
        version = delta_log.latest_version(bronze)
        batches.append(land_batch(recordings, records=80, files=2))
        service.wait_for("bronze's commit", lambda: delta_log.latest_version(bronze) > version, TIMEOUT,
                         interval=0.02)
        assert service.stop(TIMEOUT) == 0, service.log_tail(60)
        assert total_recordings(spark, lakehouse) < sum(b.kept for b in batches)  # the wave was cut
    finally:
        service.kill_if_running()

    batches.append(land_batch(recordings, records=30, files=1))
    restarted = ServiceProcess(select, env, tmp_path / "restart.log", TIMEOUT)
    try:
        restarted.wait_for_log("Serving ", TIMEOUT)  # caught up, by its dbt run
        restarted.wait_for("every landing in gold",
                           lambda: total_recordings(spark, lakehouse) == sum(b.kept for b in batches),
                           TIMEOUT, interval=0.5)
        assert restarted.stop(TIMEOUT) == 0, restarted.log_tail(60)
    finally:
        restarted.kill_if_running()

    landed = Counter(row["recording_id"] for b in batches for row in b.rows)
    in_bronze = Counter(row.recording_id for row in spark.read.format("delta").load(bronze).collect())
    assert in_bronze == landed  # every record once, none twice
    assert total_recordings(spark, lakehouse) == sum(b.kept for b in batches)


def reports_in(spark, path: str) -> int:
    return spark.read.format("delta").load(path).count()


WINDOW_SOURCES = """
version: 2
sources:
  - name: files
    tables:
      - name: readings
        meta:
          stream:
            format: json
            path: dataflow_readings
            schema: "id int, at timestamp"
"""

WINDOWED = """
{{ config(output_mode='append', watermark={'column': 'at', 'delay': '0 seconds'}) }}
select window(at, '1 minute').start as minute, count(*) as readings
from {{ source('files', 'readings') }}
group by window(at, '1 minute')
"""


def test_a_windowed_model_emits_its_window_when_the_watermark_passes_it(spark, tmp_path):
    project = write_streaming_project(tmp_path / "project", "dataflow_windows", "served",
                                      {"minute_counts": WINDOWED}, WINDOW_SOURCES, serve_after_run=True)
    env = separate_lakehouse_env(tmp_path / "lakehouse")
    lakehouse = Lakehouse.from_env(env)
    folder = landing_folder(lakehouse, "dataflow_readings")
    land_json_lines(folder, "a.json", [{"id": i, "at": f"2026-01-01T10:00:{10 + i:02d}"} for i in range(3)])
    minutes = table(lakehouse, "served", "minute_counts")

    service = ServiceProcess(["--project-dir", str(project)], env, tmp_path / "serve.log", TIMEOUT)
    try:
        service.wait_for_log("Serving ", TIMEOUT)
        assert spark.read.format("delta").load(minutes).count() == 0  # 10:00 is still open

        # A reading at 10:05 moves the watermark past 10:01: the 10:00 window closes, and is
        # written by the run without data that follows, with nothing more landing.
        land_json_lines(folder, "b.json", [{"id": 9, "at": "2026-01-01T10:05:00"}])
        service.wait_for("the closed window", lambda: spark.read.format("delta").load(minutes).count() == 1,
                         TIMEOUT, interval=0.3)
        assert service.stop(TIMEOUT) == 0, service.log_tail(60)
    finally:
        service.kill_if_running()
    row = spark.read.format("delta").load(minutes).first()
    assert (str(row.minute), row.readings) == ("2026-01-01 10:00:00", 3)
