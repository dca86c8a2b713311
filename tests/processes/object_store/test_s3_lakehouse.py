"""The whole lakehouse on an S3 API (S3Proxy on loopback): tables, checkpoints, landing folders
read as streams, quarantine and progress tables all under `s3a://`, the Derby metastore and this
machine's files in a local folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from python_runners import REPO_ROOT
from python_runners.demo.data import RECORDINGS_FOLDER, STATUS_FOLDER, land_batch, land_status_reports
from python_runners.demo.patient_changes import PATIENT_CHANGES_FOLDER, land_patient_changes
from python_runners.testing.dbt_process import run_dbt_process
from python_runners.testing.separate_lakehouse import separate_lakehouse_env
from dbt_spark_streaming.lakehouse import Lakehouse
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


def test_the_demo_builds_and_runs_a_landing_with_its_lakehouse_on_s3(s3_store, tmp_path):
    bucket = s3_store.create_bucket("lake")
    env = separate_lakehouse_env(f"{bucket}/demo", LAKEHOUSE_LOCAL_DIR=str(tmp_path / "local"), **s3_env(s3_store))
    lakehouse = Lakehouse.from_env(env)
    mirror = tmp_path / "landed"
    land(s3_store, lakehouse, mirror)

    built = run_dbt_process(["build", "--target", "s3"], env, tmp_path / "target", timeout=TIMEOUT)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-3000:]
    land(s3_store, lakehouse, mirror)
    ran = run_dbt_process(["run", "--target", "s3"], env, tmp_path / "target", timeout=TIMEOUT)
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-3000:]

    checked = audit(env, s3_store, mirror)
    assert checked["landed"] == 120 and checked["passed"], checked
    stored = s3_store.backing_path(f"{bucket}/demo")
    assert (stored / "warehouse" / "gold.db" / "device_counts" / "_delta_log").is_dir()
    assert (stored / "checkpoints" / "gold" / "device_counts" / "offsets").is_dir()
    assert not (tmp_path / "local" / "warehouse").exists()  # only the metastore and logs are local
    assert (tmp_path / "local" / "metastore").is_dir()
