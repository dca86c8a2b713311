"""COPY INTO: a copy_into model loads each file of its folder once, `force` loads them again, and a
run interrupted at any point is finished by the next one with no file's rows lost or doubled.

The interrupted runs are reproduced in-process by failing the run at the two places a crash can
leave work half done (after planning a load, after writing it); a real `dbt run` SIGKILLed on its
Delta commit is tests/processes/kill/test_killed_on_commit.py's.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from dbt_results import failure_messages, node_results
from dbt_spark_streaming.writes import copy_into
from dbt_spark_streaming.writes.load_log import LoadLog
from python_runners.testing.landing import land_json_lines, landing_folder
from streaming_projects import write_streaming_project

SCHEMA = "copied"
ROWS_PER_FILE = 10

SOURCES = """
version: 2
sources:
  - name: files
    tables:
      - name: orders
        meta:
          stream:
            format: json
            path: copy_orders
            schema: "id int, amount double"
      - name: returns
        meta:
          stream:
            format: json
            path: copy_returns
            schema: "id int, amount double"
"""


def copy_model(table: str) -> str:
    return (
        "{{ config(materialized='copy_into') }}\n"
        "select id, amount, _metadata.file_name as source_file\n"
        f"from {{{{ source('files', '{table}') }}}}"
    )


MODELS = {"loaded_orders": copy_model("orders"), "loaded_returns": copy_model("returns")}


@pytest.fixture(scope="module")
def project(tmp_path_factory, spark):
    root = tmp_path_factory.mktemp("copy_into_project")
    return str(write_streaming_project(root, "copy_into_project", SCHEMA, MODELS, SOURCES))


def land_files(folder: Path, numbers: range) -> None:
    for n in numbers:
        rows = [{"id": n * ROWS_PER_FILE + i, "amount": float(i)} for i in range(ROWS_PER_FILE)]
        land_json_lines(folder, f"orders-{n:03d}.json", rows)


def run(dbt, project, model: str, *args: str):
    return dbt("run", "--select", model, *args, project_dir=project)


def message(result, model: str) -> str:
    return node_results(result)[model].message


def id_counts(spark, model: str) -> Counter:
    return Counter(row.id for row in spark.table(f"{SCHEMA}.{model}").select("id").collect())


def load_log(spark, lakehouse, model: str) -> LoadLog:
    return LoadLog(spark, lakehouse.checkpoint_path(f"{SCHEMA}/{model}"))


def test_each_run_loads_only_new_files_and_force_loads_them_again(dbt, project, spark, lakehouse):
    folder = landing_folder(lakehouse, "copy_orders")
    land_files(folder, range(3))

    first = run(dbt, project, "loaded_orders")
    assert first.success, failure_messages(first)
    assert message(first, "loaded_orders") == "COPIED 3 files (30 rows)"

    again = run(dbt, project, "loaded_orders")
    assert again.success, failure_messages(again)
    assert message(again, "loaded_orders") == "COPIED 0 files (0 rows), 3 loaded before"
    assert id_counts(spark, "loaded_orders") == Counter(range(30))

    land_files(folder, range(3, 5))
    more = run(dbt, project, "loaded_orders")
    assert message(more, "loaded_orders") == "COPIED 2 files (20 rows), 3 loaded before"
    assert id_counts(spark, "loaded_orders") == Counter(range(50))

    forced = run(dbt, project, "loaded_orders", "--vars", "{copy_into_force: true}")
    assert forced.success, failure_messages(forced)
    assert message(forced, "loaded_orders") == "COPIED 5 files (50 rows)"
    assert id_counts(spark, "loaded_orders") == Counter({i: 2 for i in range(50)})

    after = run(dbt, project, "loaded_orders")
    assert message(after, "loaded_orders") == "COPIED 0 files (0 rows), 5 loaded before"

    loads = load_log(spark, lakehouse, "loaded_orders").loads()
    assert [(load.load_id, len(load.files), load.forced, load.loaded) for load in loads] == [
        (0, 3, False, True), (1, 2, False, True), (2, 5, True, True),
    ]
    sources = {row.source_file for row in spark.table(f"{SCHEMA}.loaded_orders").collect()}
    assert sources == {f"orders-{n:03d}.json" for n in range(5)}


@pytest.mark.parametrize("interrupted_at", ["after planning the load", "after writing the table"])
def test_an_interrupted_run_is_finished_by_the_next_without_duplicates(
    dbt, project, spark, lakehouse, monkeypatch, interrupted_at
):
    model = "loaded_returns"
    folder = Path(lakehouse.landing_path("copy_returns"))
    shutil.rmtree(folder, ignore_errors=True)
    land_files(folder, range(2))
    assert run(dbt, project, model, "--full-refresh").success
    land_files(folder, range(2, 5))

    def crash(*args, **kwargs):
        raise RuntimeError("the process died here")

    with monkeypatch.context() as patch:
        if interrupted_at == "after planning the load":
            patch.setattr(copy_into, "source_frame", crash)
        else:
            patch.setattr(LoadLog, "mark_loaded", crash)
        interrupted = run(dbt, project, model)
    assert not interrupted.success
    expected_in_table = 50 if interrupted_at == "after writing the table" else 20
    assert sum(id_counts(spark, model).values()) == expected_in_table
    pending = load_log(spark, lakehouse, model).loads()[-1]
    assert (pending.load_id, len(pending.files), pending.loaded) == (1, 3, False)

    resumed = run(dbt, project, model)

    assert resumed.success, failure_messages(resumed)
    rows = 0 if interrupted_at == "after writing the table" else 30
    assert message(resumed, model) == (
        f"COPIED 3 files ({rows} rows), 2 loaded before, "
        "finished load 1 that an earlier run left unconfirmed"
    )
    assert id_counts(spark, model) == Counter(range(50))
    assert all(load.loaded for load in load_log(spark, lakehouse, model).loads())


def test_a_lost_load_log_stops_the_run_and_full_refresh_loads_everything_again(
    dbt, project, spark, lakehouse
):
    model = "loaded_orders"
    assert run(dbt, project, model).success
    shutil.rmtree(lakehouse.checkpoint_path(f"{SCHEMA}/{model}"))

    refused = run(dbt, project, model)

    assert not refused.success
    assert "has data but its load log" in failure_messages(refused)
    assert f"dbt run --full-refresh --select {model}" in failure_messages(refused)

    rebuilt = run(dbt, project, model, "--full-refresh")
    assert rebuilt.success, failure_messages(rebuilt)
    assert message(rebuilt, model) == "COPIED 5 files (50 rows)"
    assert id_counts(spark, model) == Counter(range(50))
