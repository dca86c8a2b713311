"""One writer per table across machines: two processes that share nothing but the bucket and a
PostgreSQL metastore (each its own local folder, so no run lock between them). While the service
of one serves a table, the other's `dbt run` of it is refused, naming the holder; once the
service has stopped, the same run goes through."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import pytest

from python_runners.infra import loopback, postgres_metastore
from python_runners.testing.dbt_process import run_dbt_process
from python_runners.testing.separate_lakehouse import separate_lakehouse_env
from python_runners.testing.service_process import ServiceProcess
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.progress import status_file
from tests.processes.object_store.conftest import s3_env
from tests.processes.object_store.test_s3_lakehouse import land

TIMEOUT = 600  # a bound for a stuck run, not a speed target


@pytest.fixture
def shared_metastore(monkeypatch):
    # PostgreSQL runs as its own user, which must be able to enter the folder (mkdtemp makes 700).
    root = Path(tempfile.mkdtemp(prefix="metastore-one-writer-"))
    root.chmod(0o755)
    monkeypatch.setenv("METASTORE_PG_PORT", str(loopback.free_ports(1)[0]))
    monkeypatch.setenv("METASTORE_PG_DATA", str(root / "postgres"))
    try:
        yield postgres_metastore.start()
    finally:
        postgres_metastore.stop()
        shutil.rmtree(root, ignore_errors=True)


def wait_until_serving(service: ServiceProcess, lakehouse: Lakehouse) -> None:
    deadline = time.monotonic() + TIMEOUT
    while (status_file.read(lakehouse) or {}).get("state") != "serving":
        assert not service.has_exited(), service.output()[-4000:]
        assert time.monotonic() < deadline, service.output()[-4000:]
        time.sleep(0.5)


def test_a_second_machine_may_not_write_a_table_the_service_serves_until_it_stops(s3_store, shared_metastore, tmp_path):
    bucket = s3_store.create_bucket("shared")
    common = {**s3_env(s3_store), "LAKEHOUSE_METASTORE_URL": shared_metastore, "DBT_TARGET": "s3"}
    machine = {name: separate_lakehouse_env(f"{bucket}/lake", LAKEHOUSE_LOCAL_DIR=str(tmp_path / name), **common)
               for name in ("first", "second")}
    lakehouse = Lakehouse.from_env(machine["first"])
    mirror = tmp_path / "landed"
    land(s3_store, lakehouse, mirror)
    seeded = run_dbt_process(["seed", "--target", "s3"], machine["first"], tmp_path / "target-first", timeout=TIMEOUT)
    assert seeded.returncode == 0, seeded.stdout[-3000:]

    service = ServiceProcess(["--select", "bronze_recordings"], machine["first"], tmp_path / "service.log", TIMEOUT)
    try:
        wait_until_serving(service, lakehouse)
        refused = run_dbt_process(["run", "--target", "s3", "--select", "bronze_recordings"], machine["second"],
                                  tmp_path / "target-second", timeout=TIMEOUT)
        assert refused.returncode != 0
        assert "bronze.bronze_recordings is being written by process" in refused.stdout, refused.stdout[-3000:]
        assert "service start" in refused.stdout  # the holder's command, from the metastore's record
    finally:
        assert service.stop(TIMEOUT) == 0, service.output()[-3000:]

    land(s3_store, lakehouse, mirror)
    admitted = run_dbt_process(["run", "--target", "s3", "--select", "bronze_recordings"], machine["second"],
                               tmp_path / "target-second", timeout=TIMEOUT)
    assert admitted.returncode == 0, admitted.stdout[-4000:]
