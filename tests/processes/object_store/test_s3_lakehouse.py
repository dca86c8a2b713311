"""The whole lakehouse on an S3 API (S3Proxy on loopback): tables, checkpoints, landing folders
read as streams, quarantine and progress tables all under `s3a://`, the Derby metastore and this
machine's files in a local folder. One story in one lakehouse, as each step's processes start a
JVM and an S3 client: build, a run killed on its commit and its re-run, then the service."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from python_runners import REPO_ROOT
from python_runners.demo.data import RECORDINGS_FOLDER, STATUS_FOLDER, land_batch, land_status_reports
from python_runners.demo.patient_changes import PATIENT_CHANGES_FOLDER, land_patient_changes
from python_runners.testing import delta_log
from python_runners.testing.dbt_process import run_dbt_process
from python_runners.testing.pipeline_process import PipelineProcess
from python_runners.testing.service_process import ServiceProcess
from python_runners.testing.separate_lakehouse import separate_lakehouse_env
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.progress.status_file import status_path
from dbt_spark_streaming.serve.input_watches import REMOTE_POLL_SECONDS
from tests.processes.object_store.conftest import s3_env

TIMEOUT = 900  # a bound for a stuck run, not a speed target


def land(store, lakehouse: Lakehouse, mirror: Path, records: int = 60):
    """A demo landing: written in a local folder (the source system's copy, which the audit
    reads), then each new file PUT into the store's landing folder."""
    batch = land_batch(mirror / RECORDINGS_FOLDER, records=records, files=2)
    land_status_reports(batch.number, mirror / STATUS_FOLDER)
    land_patient_changes(batch.number, mirror / PATIENT_CHANGES_FOLDER)
    for folder in (RECORDINGS_FOLDER, STATUS_FOLDER, PATIENT_CHANGES_FOLDER):
        new = [file for file in sorted((mirror / folder).iterdir()) if not file.name.startswith(".")
               and not store.backing_path(f"{lakehouse.landing_path(folder)}/{file.name}").exists()]
        store.upload(new, lakehouse.landing_path(folder))
    return batch


def audit(env, store, mirror: Path) -> dict:
    result = subprocess.run(
        [sys.executable, "-m", "python_runners.testing.lakehouse_audit",
         str(mirror / RECORDINGS_FOLDER), str(mirror / PATIENT_CHANGES_FOLDER), json.dumps(store.spark_conf())],
        env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def served_and_idle(status_file: Path) -> bool:
    """The service serves, and none of its models is running or has an input change pending."""
    if not status_file.exists():
        return False
    status = json.loads(status_file.read_text())
    return status["state"] == "serving" and all(
        query["state"] == "waiting for new data" for query in status["queries"])


def test_the_demo_builds_is_served_and_survives_a_kill_with_its_lakehouse_on_s3(s3_store, tmp_path):
    """`dbt build`; the service serves a landing to gold and stops; then a landing, a `dbt run`
    SIGKILLed right after its Delta commit to bronze, and a re-run. Every landed record is in
    each layer once, and gold and the cdc tables equal a recompute."""
    bucket = s3_store.create_bucket("lake")
    env = separate_lakehouse_env(f"{bucket}/demo", LAKEHOUSE_LOCAL_DIR=str(tmp_path / "local"),
                                 DBT_TARGET="s3", **s3_env(s3_store))
    lakehouse = Lakehouse.from_env(env)
    mirror = tmp_path / "landed"
    land(s3_store, lakehouse, mirror)

    built = run_dbt_process(["build"], env, tmp_path / "target", timeout=TIMEOUT)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-3000:]
    stored = s3_store.backing_path(f"{bucket}/demo")
    assert (stored / "warehouse" / "gold.db" / "device_counts" / "_delta_log").is_dir()
    assert (stored / "checkpoints" / "gold" / "device_counts" / "offsets").is_dir()
    assert not (tmp_path / "local" / "warehouse").exists()  # only the metastore and logs are local
    assert (tmp_path / "local" / "metastore").is_dir()

    serve_a_landing(s3_store, lakehouse, mirror, env, tmp_path / "serve.log")

    land(s3_store, lakehouse, mirror)
    bronze = stored / "warehouse" / "bronze.db" / "bronze_recordings"
    killed = PipelineProcess(["run"], env, tmp_path / "killed.log")
    killed.kill_on_delta_commit(bronze, delta_log.latest_version(bronze), TIMEOUT)
    ran = run_dbt_process(["run"], env, tmp_path / "target", timeout=TIMEOUT)  # batch tables too
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-3000:]
    checked = audit(env, s3_store, mirror)
    assert checked["landed"] == 180 and checked["passed"], checked


def serve_a_landing(store, lakehouse: Lakehouse, mirror: Path, env: dict, log: Path) -> None:
    """The service started, a landing served to gold, every model idle, the service stopped; it
    counted its requests to the store."""
    service = ServiceProcess([], env, log, TIMEOUT)
    try:
        service.wait_for_log("Serving ", TIMEOUT)
        gold = store.backing_path(f"{lakehouse.warehouse}/gold.db/device_counts")
        served_from = delta_log.latest_version(gold)
        land(store, lakehouse, mirror)
        service.wait_for("gold's commit of the landing", lambda: delta_log.latest_version(gold) > served_from)
        # Idle for longer than a poll of the store: every file of the landing was taken.
        status_file = status_path(lakehouse)
        idle_since: list[float] = []

        def settled() -> bool:
            if not served_and_idle(status_file):
                idle_since.clear()
                return False
            idle_since[:1] = idle_since[:1] or [time.monotonic()]
            return time.monotonic() - idle_since[0] > 3 * REMOTE_POLL_SECONDS

        service.wait_for("every served model idle", settled)
        requests = json.loads(status_file.read_text())["store_requests"]
        assert requests["requests"] > 0 and requests["list"] > 0, requests
    finally:
        assert service.stop(wait_seconds=TIMEOUT) == 0, service.log_tail()
