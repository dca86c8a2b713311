"""source() of a meta.stream source only names its view; the view is registered when a model runs.

So `dbt parse`, `dbt ls` and `dbt compile` start no Spark for a source: no landing folder is
listed or created, no schema inferred or stored, no metastore opened. And a view is registered
again in each dbt invocation of a process, so a later run reads with what landed since.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dbt_results import failure_messages, node_results
from python_runners import REPO_ROOT
from python_runners.testing.landing import land_json_lines, landing_folder
from python_runners.testing.separate_lakehouse import separate_lakehouse_env
from streaming_projects import write_streaming_project

# In a process of its own, on an empty lakehouse: the demo project (this repository).
DBT_WITHOUT_SPARK = textwrap.dedent("""
    import json, sys
    from pyspark import SparkContext
    from dbt_spark_streaming import session
    from python_runners.ops.dbt_invocation import invoke_dbt, target_args

    succeeded = {}
    for command in (["parse"], ["ls"], ["compile"]):
        result = invoke_dbt([*command, *target_args(sys.argv[1])])
        succeeded[command[0]] = result.success
    print(json.dumps({
        "succeeded": succeeded,
        "spark_started": session.active_session() is not None
            or SparkContext._active_spark_context is not None,
    }))
""")


def files_under(folder: Path) -> list[str]:
    return sorted(
        str(Path(root, name).relative_to(folder))
        for root, dirs, files in os.walk(folder) for name in dirs + files
    )


def test_parse_ls_and_compile_of_the_demo_start_no_spark_and_write_nothing(tmp_path):
    lakehouse = tmp_path / "lakehouse"
    lakehouse.mkdir()
    env = separate_lakehouse_env(lakehouse)  # every part under the empty folder

    done = subprocess.run(
        [sys.executable, "-c", DBT_WITHOUT_SPARK, str(tmp_path / "target")],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300,
    )

    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome == {
        "succeeded": {"parse": True, "ls": True, "compile": True}, "spark_started": False,
    }, done.stdout[-3000:]
    # No landing folder (the demo's sources say create_path: true), no schema versions
    # (checkpoints/_source_schemas), no metastore, run lock or Spark log.
    assert files_under(lakehouse) == []
    compiled = (tmp_path / "target" / "compiled" / "streaming_lakehouse" / "models" / "bronze"
                / "bronze_recordings.sql").read_text()
    assert "stream_source__landing__recordings" in compiled


SOURCES = """
sources:
  - name: drops
    tables:
      - name: readings
        meta:
          stream:
            format: json
            path: render_time_readings
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = write_streaming_project(tmp_path_factory.mktemp("render-time"), "render_time", "render_time", {
        "reading_table": (
            "{{ config(materialized='table', file_format='delta') }}\n"
            "select * except (_metadata) from {{ source('drops', 'readings') }}"
        ),
        "reading_stream": "select id from {{ source('drops', 'readings') }}",
    }, SOURCES)
    return root


def land(lakehouse, name: str, lines: list[dict]) -> None:
    land_json_lines(landing_folder(lakehouse, "render_time_readings"), name, lines)


def test_compile_registers_no_view_and_a_run_registers_it(dbt, project, spark, lakehouse):
    for view in ("batch_source__drops__readings", "stream_source__drops__readings"):
        spark.catalog.dropTempView(view)

    compiled = dbt("compile", project_dir=project)

    assert compiled.success, failure_messages(compiled)
    assert not spark.catalog.tableExists("batch_source__drops__readings")
    assert not spark.catalog.tableExists("stream_source__drops__readings")
    assert not os.path.exists(lakehouse.checkpoint_path("_source_schemas/drops.readings"))

    # A missing folder is still the source's message, at run time, for each model that reads it.
    result = dbt("run", project_dir=project)
    assert not result.success
    messages = {name: str(r.message) for name, r in node_results(result).items()}
    for model in ("reading_table", "reading_stream"):
        assert "Source drops.readings: its folder" in messages[model], messages
        assert "does not exist" in messages[model], messages


def test_each_invocation_registers_its_views_again(dbt, project, spark, lakehouse):
    land(lakehouse, "a.json", [{"id": 1}])
    first = dbt("run", "--select", "reading_table", project_dir=project)
    assert first.success, failure_messages(first)
    assert spark.table("render_time.reading_table").columns == ["id", "_corrupt_record"]

    # A new column lands: the inferred schema evolves (add_new_columns) when the view is
    # registered again, which the second invocation in this process must do.
    land(lakehouse, "b.json", [{"id": 2, "extra": "x"}])
    second = dbt("run", "--select", "reading_table", "reading_stream", project_dir=project)

    assert second.success, failure_messages(second)
    table = spark.table("render_time.reading_table")
    assert "extra" in table.columns
    assert sorted((row.id, row.extra) for row in table.collect()) == [(1, None), (2, "x")]
    assert sorted(row.id for row in spark.table("render_time.reading_stream").collect()) == [1, 2]

    # `dbt show` of the table model runs its SQL (a batch read of the source) through dbt.
    shown = dbt("show", "--select", "reading_table", project_dir=project)
    assert shown.success, failure_messages(shown)
    assert len(node_results(shown)["reading_table"].agate_table.rows) == 2
