"""The same models on a Spark cluster: a standalone master and 2 workers on loopback, tables in a
Hive metastore (PostgreSQL) that several processes share.

Everything runs as separate processes on a lakehouse of the module's own, on ports of its own so a
developer's `python -m python_runners cluster start` is left alone.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from python_runners.demo.data import land_batch, land_status_reports, recordings_folder, status_folder
from dbt_spark_streaming.config.expectations import QUARANTINED_AT_COLUMN
from dbt_spark_streaming.lakehouse import Lakehouse
from python_runners.testing.command_line import run_command_line
from python_runners.testing.dbt_process import run_dbt_process
from python_runners.testing.delta_log import is_delta_table
from python_runners.testing.pipeline_process import PipelineProcess
from python_runners.testing.separate_lakehouse import separate_lakehouse_env
from python_runners.infra.standalone_cluster import ClusterSettings, alive_workers, master_state, worker_state
from python_runners.testing.service_process import ServiceProcess

pytestmark = pytest.mark.cluster
TIMEOUT = 600
PORTS = {
    "SPARK_MASTER_PORT": "7177",
    "SPARK_MASTER_WEBUI_PORT": "8180",
    "SPARK_WORKER_WEBUI_PORT": "8181",
    "METASTORE_PG_PORT": "5439",
}
RUN_DEPENDENT_COLUMNS = {"ingested_at", QUARANTINED_AT_COLUMN}  # current_timestamp() when written
SERVED_MODELS = ["bronze_recordings", "silver_recordings", "device_counts"]
# Built both ways and compared: an append chain with a quarantine and a complete-mode aggregate,
# and a cdc_table's MERGE (the demo's other models add nothing the cluster does differently).
COMPARED = ("--select", "+device_counts", "+patients")
FIRST_BATCH, SECOND_BATCH = 400, 100  # recordings landed by the fixture, then by the service test


def base_env(root: Path, **settings: str) -> dict[str, str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("SPARK_MASTER")}
    return separate_lakehouse_env(root, inherited, SPARK_SHUFFLE_PARTITIONS="2", **settings)


@pytest.fixture(scope="module")
def cluster():
    # PostgreSQL runs as its own user, which must be able to enter the folder (mkdtemp makes 700).
    root = Path(tempfile.mkdtemp(prefix="lakehouse-cluster-"))
    root.chmod(0o755)
    env = base_env(
        root,
        **PORTS,
        SPARK_MASTER=f"spark://127.0.0.1:{PORTS['SPARK_MASTER_PORT']}",
        LAKEHOUSE_METASTORE_URL=f"jdbc:postgresql://127.0.0.1:{PORTS['METASTORE_PG_PORT']}/metastore?user=hive",
    )
    started = cluster_command(env, "start")
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        landing = Lakehouse.from_env(env)
        batch = land_batch(recordings_folder(landing), records=FIRST_BATCH, files=4)
        land_status_reports(batch.number, status_folder(landing))
        run_dbt(env, root / "seed.log", "seed", "--target", "cluster")
        yield env, root, batch
    finally:
        cluster_command(env, "stop")
        shutil.rmtree(root, ignore_errors=True)


def cluster_command(env: dict, action: str) -> subprocess.CompletedProcess:
    return run_command_line(["cluster", action], env, TIMEOUT)


def run_dbt(env: dict, log: Path, *args: str) -> None:
    process = PipelineProcess(args, env, log)
    assert process.wait(TIMEOUT) == 0, f"dbt {' '.join(args)} failed:\n{process.log_tail(60)}"


def model_tables(warehouse: Path) -> dict[str, Path]:
    return {
        f"{schema}.{table.name}": table
        for schema in ("bronze", "silver", "gold")
        for table in sorted((warehouse / f"{schema}.db").glob("*"))
        if is_delta_table(table)
    }


def test_dbt_run_on_the_cluster_gives_the_local_tables_from_the_workers_executors(cluster, spark, tmp_path):
    env, root, first = cluster
    settings = ClusterSettings.from_env(env)
    local = tmp_path / "local"
    local_env = base_env(local, LAKEHOUSE_LANDING_DIR=str(root / "landing"), SPARK_MASTER="local[2]")
    run_dbt(local_env, tmp_path / "local-seed.log", "seed")
    run_dbt(local_env, tmp_path / "local-run.log", "run", *COMPARED)
    apps_before = {app["id"] for app in master_state(settings).get("completedapps", [])}

    run_dbt(env, tmp_path / "cluster-run.log", "run", *COMPARED, "--target", "cluster")

    local_tables = model_tables(local / "warehouse")
    cluster_tables = model_tables(root / "warehouse")
    assert set(cluster_tables) == set(local_tables)
    assert {"bronze.bronze_recordings", "silver.silver_recordings", "gold.device_counts", "silver.patients"} <= set(
        local_tables
    )
    for name, path in local_tables.items():
        expected = spark.read.format("delta").load(str(path))
        actual = spark.read.format("delta").load(str(cluster_tables[name]))
        columns = [c for c in expected.columns if c not in RUN_DEPENDENT_COLUMNS]
        assert actual.columns == expected.columns, name
        assert actual.count() == expected.count(), name
        assert actual.select(columns).exceptAll(expected.select(columns)).count() == 0, name
        assert expected.select(columns).exceptAll(actual.select(columns)).count() == 0, name
    assert spark.read.format("delta").load(str(cluster_tables["silver.silver_recordings"])).count() == first.kept
    assert "silver.silver_recordings__quarantine" in cluster_tables

    state = master_state(settings)
    (app,) = [a for a in state["completedapps"] if a["id"] not in apps_before]
    workers = alive_workers(state)
    assert len(workers) == 2
    for worker in workers:
        executors = [e for e in worker_state(worker)["finishedexecutors"] if e["appid"] == app["id"]]
        assert executors, f"worker {worker['id']} ran no executor of {app['id']}"
        logs = [root / "cluster" / "work" / app["id"] / str(e["id"]) / "stderr" for e in executors]
        finished = sum(log.read_text(errors="replace").count("Finished task") for log in logs)
        assert finished > 0, f"the executors on worker {worker['id']} finished no task"


def test_a_second_process_queries_the_shared_metastore_while_the_service_runs(cluster, spark, tmp_path):
    env, root, first = cluster
    landing = Lakehouse.from_env(env)
    batch = land_batch(recordings_folder(landing), records=SECOND_BATCH, files=1)
    kept = first.kept + batch.kept  # neither quarantined nor dropped by silver's expectations
    land_status_reports(batch.number, status_folder(landing))
    service = ServiceProcess(["--trigger", "2 seconds", "--select", *SERVED_MODELS],
                             {**env, "DBT_TARGET": "cluster"}, tmp_path / "service.log", TIMEOUT)
    try:
        service.wait_for("serving", lambda: f"Serving {len(SERVED_MODELS)} streaming queries" in service.output())
        silver = str(root / "warehouse" / "silver.db" / "silver_recordings")
        service.wait_for(
            "the new recordings in silver",
            lambda: spark.read.format("delta").load(silver).count() >= kept,
            interval=1,
        )

        # Another JVM on the same catalog: local Spark, the cluster target's metastore.
        query = run_dbt_process(
            ["--quiet", "show", "--target", "cluster",
             "--inline", "select count(*) as recordings from silver.silver_recordings", "--output", "json"],
            {**env, "SPARK_MASTER": "local[1]"}, tmp_path / "target", timeout=TIMEOUT,
        )
        assert query.returncode == 0, query.stdout + query.stderr
        assert json.loads(query.stdout)["show"] == [{"recordings": kept}]
        assert service.process.poll() is None, "the service stopped while the other process used the metastore"

        assert service.stop(TIMEOUT) == 0, service.output()[-4000:]
    finally:
        service.kill_if_running()
