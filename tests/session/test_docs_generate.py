"""`dbt docs generate` works, and its catalog shows each streaming model's output mode, trigger and
checkpoint (and a copy_into model's load log, and a model's expectations), as recorded on the model's Delta table."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt_results import failure_messages
from dbt_spark_streaming.delta.catalog import table_properties
from streaming_projects import write_streaming_project

SOURCES = """
version: 2
sources:
  - name: files
    tables:
      - name: docs_events
        meta:
          stream:
            format: json
            path: docs_events
            schema: "id int, kind string"
"""

MODELS = {
    "appended_events": (
        "{{ config(expectations=[{'name': 'id_present', 'expression': 'id is not null', "
        "'action': 'drop'}]) }}\n"
        "select id, kind from {{ source('files', 'docs_events') }}"
    ),
    "kind_totals": (
        "{{ config(output_mode='complete', trigger={'processing_time': '1 minute'}) }}\n"
        "select kind, count(*) as events from stream({{ ref('appended_events') }}) group by kind"
    ),
    "copied_events": (
        "{{ config(materialized='copy_into') }}\n"
        "select id, kind from {{ source('files', 'docs_events') }}"
    ),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory, spark, lakehouse):
    root = tmp_path_factory.mktemp("docs_project")
    return str(write_streaming_project(root, "docs_project", "documented", MODELS, SOURCES))


def stats(catalog, model: str) -> dict:
    node = catalog.nodes[f"model.docs_project.{model}"]
    return {stat.label: stat.value for stat in node.stats.values() if stat.include}


def test_docs_show_output_mode_trigger_and_checkpoint(dbt, project, spark, lakehouse):
    landing = lakehouse.landing_path("docs_events")
    spark.createDataFrame([(1, "a"), (2, "b"), (3, "a")], "id int, kind string").write.mode("overwrite").json(landing)

    # The docs show the trigger the run wrote the table with and, when a run-wide one replaced
    # the model's own, that one too.
    run = dbt("run", "--vars", "{stream_trigger: available_now}", project_dir=project)
    assert run.success, failure_messages(run)
    docs = dbt("docs", "generate", project_dir=project)
    assert docs.success, failure_messages(docs)

    catalog = docs.result
    assert stats(catalog, "appended_events") == {
        "Output mode": "append",
        "Trigger": "available now",
        "Checkpoint": lakehouse.checkpoint_path("documented/appended_events"),
        "Expectations": "id_present (drop): id is not null",
    }
    assert stats(catalog, "kind_totals") == {
        "Output mode": "complete",
        "Trigger": (
            "available now (run-wide, from --vars stream_trigger; "
            "the model's own: processing time, every 1 minute)"
        ),
        "Checkpoint": lakehouse.checkpoint_path("documented/kind_totals"),
    }
    assert stats(catalog, "copied_events") == {
        "Load log": lakehouse.checkpoint_path("documented/copied_events"),
    }
    columns = catalog.nodes["model.docs_project.kind_totals"].columns
    assert set(columns) == {"kind", "events"}

    # A property is set when the table is created or when its value changes: a Delta commit,
    # so never once per run. A run that writes nothing keeps the trigger the table says it was
    # written with: a commit would wake the models that stream from it.
    assert property_commits(spark) == {"appended_events": 0, "kind_totals": 0, "copied_events": 0}
    idle = dbt("run", "--vars", "{stream_trigger: once}", project_dir=project)
    assert idle.success, failure_messages(idle)
    assert property_commits(spark) == {"appended_events": 0, "kind_totals": 0, "copied_events": 0}
    spark.createDataFrame([(5, "c")], "id int, kind string").write.mode("append").json(landing)
    for _ in range(2):
        rerun = dbt("run", "--vars", "{stream_trigger: once}", project_dir=project)
        assert rerun.success, failure_messages(rerun)
        assert property_commits(spark) == {"appended_events": 1, "kind_totals": 1, "copied_events": 0}
    assert table_properties(spark, "documented.appended_events")["streaming.trigger"] == (
        "once (run-wide, from --vars stream_trigger; the model's own: available now)"
    )


def test_a_changed_output_mode_is_recorded(dbt, project, spark, lakehouse):
    """The gold aggregate switches from rewriting the table to merging its changed rows; the
    property says so from that run on, in one more commit, and the counts carry on."""
    model = Path(project) / "models" / "kind_totals.sql"
    model.write_text(
        MODELS["kind_totals"].replace("output_mode='complete'", "output_mode='update', unique_key='kind'")
    )
    landing = lakehouse.landing_path("docs_events")
    spark.createDataFrame([(4, "b")], "id int, kind string").write.mode("append").json(landing)

    # Run-wide availableNow: kind_totals' own processing-time trigger would leave it serving.
    run = dbt(
        "run", "--select", "appended_events", "kind_totals",
        "--vars", "{stream_trigger: available_now}", project_dir=project,
    )
    assert run.success, failure_messages(run)

    assert table_properties(spark, "documented.kind_totals")["streaming.output_mode"] == "update"
    assert property_commits(spark)["kind_totals"] == 2
    assert sorted(spark.table("documented.kind_totals").collect()) == [("a", 2), ("b", 2), ("c", 1)]


def property_commits(spark) -> dict[str, int]:
    return {
        model: spark.sql(f"describe history documented.{model}")
        .where("operation = 'SET TBLPROPERTIES'").count()
        for model in ("appended_events", "kind_totals", "copied_events")
    }
