"""Targets on one metastore: production keeps the layer's schema, any other target writes its own
schemas and checkpoints (the adapter's generate_schema_name), and a CI build with --defer reads
production's upstream tables as streams while leaving production's files as they were."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from dbt_results import failure_messages
from python_runners.ops.dbt_invocation import invoke_dbt, target_args
from streaming_projects import write_streaming_project

LAYER = "envs"
INPUT = "envs_in.events"
MODELS = {
    "bronze_events": f"select id, kind from stream({INPUT})",
    "kind_totals": "{{ config(output_mode='complete') }}\n"
                   "select kind, count(*) as events from stream({{ ref('bronze_events') }}) group by kind",
}


def run(project: Path, target: str, target_path: Path, *more: str):
    result = invoke_dbt(["run", "--target", target, *target_args(target_path), *more], str(project))
    assert result.success, failure_messages(result)
    return result


def files_of(*folders: Path) -> dict[str, str]:
    """Every file under the folders, by path, with a hash of its bytes."""
    return {
        str(path): hashlib.sha256(path.read_bytes()).hexdigest()
        for folder in folders for path in sorted(folder.rglob("*")) if path.is_file()
    }


def rows(spark, table: str) -> list[tuple]:
    return sorted(tuple(row) for row in spark.table(table).collect())


def rows_of_query(spark, sql: str) -> list[tuple]:
    return sorted(tuple(row) for row in spark.sql(sql).collect())


def production_files(lakehouse) -> dict[str, str]:
    return files_of(Path(lakehouse.warehouse) / f"{LAYER}.db", Path(lakehouse.checkpoints) / LAYER)


def fresh_input(spark) -> None:
    spark.sql("create schema if not exists envs_in")
    spark.sql(f"create or replace table {INPUT} (id int, kind string) using delta")
    spark.sql(f"insert into {INPUT} values (1, 'a'), (2, 'b'), (3, 'a')")


def test_two_targets_on_one_metastore_share_no_table_and_no_checkpoint(spark, lakehouse, tmp_path, monkeypatch):
    monkeypatch.setenv("USER", "alice")
    project = write_streaming_project(tmp_path / "project", "environments", LAYER, MODELS)
    fresh_input(spark)

    run(project, "local", tmp_path / "prod-target")
    prod = production_files(lakehouse)
    run(project, "dev", tmp_path / "dev-target")

    # production keeps the layer's schema; the sandbox prefixes it with its own
    dev_schema = f"dev_alice_{LAYER}"
    for schema in (LAYER, dev_schema):
        assert rows(spark, f"{schema}.bronze_events") == [(1, "a"), (2, "b"), (3, "a")]
        assert rows(spark, f"{schema}.kind_totals") == [("a", 2), ("b", 1)]
        assert (Path(lakehouse.checkpoints) / schema / "bronze_events" / "commits").is_dir()
    assert production_files(lakehouse) == prod  # the sandbox's run wrote nothing of production's
    assert not set(prod) & set(files_of(Path(lakehouse.warehouse) / f"{dev_schema}.db",
                                        Path(lakehouse.checkpoints) / dev_schema))

    # each target's checkpoint is its own: new input reaches the sandbox, production untouched
    spark.sql(f"insert into {INPUT} values (4, 'c')")
    run(project, "dev", tmp_path / "dev-target")
    assert rows(spark, f"{dev_schema}.kind_totals") == [("a", 2), ("b", 1), ("c", 1)]
    assert production_files(lakehouse) == prod
    run(project, "local", tmp_path / "prod-target")
    assert rows(spark, f"{LAYER}.kind_totals") == [("a", 2), ("b", 1), ("c", 1)]


def test_a_ci_build_with_defer_reads_production_and_leaves_its_files_unchanged(spark, lakehouse, tmp_path):
    project = write_streaming_project(tmp_path / "project", "environments", LAYER, MODELS)
    fresh_input(spark)
    for schema in (LAYER, f"ci_{LAYER}"):  # the other test's run, if any, gone
        spark.sql(f"drop schema if exists {schema} cascade")
        shutil.rmtree(Path(lakehouse.checkpoints) / schema, ignore_errors=True)
    run(project, "local", tmp_path / "prod-target")
    state = tmp_path / "prod-state"
    state.mkdir()
    shutil.copy(tmp_path / "prod-target" / "manifest.json", state / "manifest.json")
    prod = production_files(lakehouse)

    # CI changed only the gold model: it is built in CI's schema, its upstream read from production
    (project / "models" / "kind_totals.sql").write_text(
        "{{ config(output_mode='complete') }}\n"
        "select kind, count(*) as events, max(id) as last_id from stream({{ ref('bronze_events') }}) group by kind\n"
    )
    run(project, "ci", tmp_path / "ci-target", "--select", "state:modified+", "--defer", "--state", str(state))

    assert rows(spark, f"ci_{LAYER}.kind_totals") == rows_of_query(
        spark, f"select kind, count(*), max(id) from {LAYER}.bronze_events group by kind")
    assert not spark.catalog.tableExists(f"ci_{LAYER}.bronze_events")  # deferred, not built
    assert (Path(lakehouse.checkpoints) / f"ci_{LAYER}" / "kind_totals" / "commits").is_dir()
    assert production_files(lakehouse) == prod
    assert rows(spark, f"{LAYER}.kind_totals") == [("a", 2), ("b", 1)]  # production's gold as it was
