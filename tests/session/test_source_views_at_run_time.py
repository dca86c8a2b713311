"""source() of a meta.stream source only names its view; the view is registered when a model runs,
and again in each dbt invocation of a process, so a later run reads with what landed since.
(That `dbt parse`, `ls` and `compile` start no Spark at all is tests/processes/commands/
test_parse_starts_no_spark.py's, in a process of its own.)
"""

from __future__ import annotations

import os

import pytest

from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_results import failure_messages, node_results
from python_runners.testing.landing import land_json_lines, landing_folder
from streaming_projects import write_streaming_project

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
    assert not os.path.exists(Lakehouse.from_env().source_schemas("drops.readings"))

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
