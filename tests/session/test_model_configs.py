"""Model configs, and what a person sees when a streaming model cannot run: the model, the setting, the fix."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from dbt_results import failure_messages, node_results, rows_processed
from python_runners.testing.landing import land_json_lines, landing_folder
from streaming_projects import write_streaming_project

MODELS = {
    "ok_events": "select id, kind from stream(fixtures.events)",
    "sorted_events": "select id, kind from stream(fixtures.events) order by id",
    "appended_counts": "select kind, count(*) as n from stream(fixtures.events) group by kind",
    # Read through source(), as dbt models do: the config is then checked while the model compiles.
    "bad_mode": (
        "{{ config(output_mode='upsert') }}\nselect id from stream({{ source('fixtures', 'events') }})"
    ),
    "bad_trigger": (
        "{{ config(trigger={'every': '5 seconds'}) }}\n"
        "select id from stream({{ source('fixtures', 'events') }})"
    ),
    "bad_watermark": (
        "{{ config(watermark={'column': 'id', 'within': '1 hour'}) }}\n"
        "select id from stream({{ source('fixtures', 'events') }})"
    ),
    "bad_dedupe": (
        "{{ config(dedupe={'key': 'id'}) }}\nselect id from stream({{ source('fixtures', 'events') }})"
    ),
    "keyless_update": (
        "{{ config(output_mode='update') }}\n"
        "select kind, count(*) as n from stream({{ source('fixtures', 'events') }}) group by kind"
    ),
    "bad_schema_change": (
        "{{ config(on_schema_change='sync_all_columns') }}\n"
        "select id from stream({{ source('fixtures', 'events') }})"
    ),
    # a misspelt setting: dbt keeps any key, so the model would run on the default unwarned
    "misspelt_mode": (
        "{{ config(outptu_mode='append') }}\nselect id from stream({{ source('fixtures', 'events') }})"
    ),
    "valid_counts": (
        "{{ config(output_mode='update', unique_key=['kind'], trigger='5 seconds',"
        " dedupe={'keys': ['id'], 'within_watermark': false},"
        " on_schema_change='append_new_columns') }}\n"
        "select kind, count(*) as n from stream({{ source('fixtures', 'events') }}) group by kind"
    ),
    "misplaced_watermark": (
        "{{ config(watermark=[{'column': 'arrived_at', 'delay': '1 hour'}]) }}\n"
        "select id, kind from stream(fixtures.events)"
    ),
    "shares_a": (
        "{{ config(checkpoint_location='shared/one') }}\n"
        "select id from stream({{ source('fixtures', 'events') }})"
    ),
    "shares_b": (
        "{{ config(checkpoint_location='shared/one') }}\n"
        "select kind from stream({{ source('fixtures', 'events') }})"
    ),
    "configured_events": (
        "{{ config(trigger={'once': true}, partition_by='kind',"
        " tblproperties={'delta.appendOnly': 'true'}) }}\n"
        "select id, kind from stream(fixtures.events)"
    ),
    "evolving_counts": (
        "{{ config(output_mode='complete') }}\n"
        "select kind, count(*) as n from stream(fixtures.events) group by kind"
    ),
    "evolving_filter": "select id, kind from stream(fixtures.events)",
    "landed_snapshot": (
        "{{ config(materialized='table') }}\nselect id, kind from {{ source('drop', 'events') }}"
    ),
    # its watermark comes from --vars, so one test can build it and then break its config
    "refreshed_events": (
        "{{ config(watermark=var('refreshed_watermark', none)) }}\n"
        "select id, kind, current_timestamp() as seen_at from stream(fixtures.events)"
    ),
}

SOURCES = """
version: 2
sources:
  - name: fixtures
    tables:
      - name: events
  - name: drop
    tables:
      - name: events
        meta:
          stream:
            format: json
            path: fixture_events
            schema: "id int, kind string"
"""


@pytest.fixture(scope="module")
def errors_project(tmp_path_factory, spark, lakehouse):
    """A small dbt project using this repository's macros, over a Delta table of 6 events."""
    root = tmp_path_factory.mktemp("errors_project")
    write_streaming_project(root, "model_errors", "fixtures_out", MODELS, SOURCES)

    spark.sql("create schema if not exists fixtures")
    spark.sql("create or replace table fixtures.events (id int, kind string) using delta")
    spark.sql("insert into fixtures.events values (1,'a'),(2,'b'),(3,'a'),(4,'c'),(5,'a'),(6,'b')")
    land_json_lines(landing_folder(lakehouse, "fixture_events"), "events.json",
                    [{"id": 1, "kind": "a"}, {"id": 2, "kind": "b"}])
    return str(root)


def run(dbt, project, *args):
    return dbt("run", *args, project_dir=project)


def table_exists(spark, name: str) -> bool:
    return spark.catalog.tableExists(f"fixtures_out.{name}")


def test_order_by_fails_naming_the_model_and_the_alternative(dbt, errors_project, spark):
    result = run(dbt, errors_project, "--select", "sorted_events")

    assert not result.success
    message = failure_messages(result)
    assert "Model sorted_events uses ORDER BY" in message
    assert "Sort when you read the table instead" in message and "output_mode='complete'" in message
    assert "\tat org.apache" not in message and "Py4J" not in message


def test_aggregate_in_append_mode_points_to_complete_mode(dbt, errors_project):
    result = run(dbt, errors_project, "--select", "appended_counts")

    assert not result.success
    message = failure_messages(result)
    assert "Model appended_counts" in message
    assert "output_mode='complete'" in message


def test_bad_output_mode_fails_at_compile_time(dbt, errors_project, spark):
    result = run(dbt, errors_project, "--select", "bad_mode")

    assert not result.success
    message = failure_messages(result)
    assert "Compilation Error in model bad_mode" in message
    assert "output_mode 'upsert'" in message and "'append'" in message and "'complete'" in message
    assert not table_exists(spark, "bad_mode")


def test_bad_trigger_fails_at_compile_time(dbt, errors_project, spark):
    result = run(dbt, errors_project, "--select", "bad_trigger")

    assert not result.success
    message = failure_messages(result)
    assert "Compilation Error in model bad_trigger" in message
    assert "available_now" in message and "processing_time" in message
    assert not table_exists(spark, "bad_trigger")


ALLOWED_TRIGGERS = (
    "Allowed: {'available_now': true}, {'once': true}, {'processing_time': '<n> seconds'} or "
    "{'on_new_data': true} (in "
    "the model's config, or for a whole run with --vars '{stream_trigger: ...}')."
)
COMPILE_ERRORS = {
    "bad_mode": (
        "Model bad_mode: output_mode 'upsert' is not supported by streaming_table. Allowed values: "
        "'append' (each input row written once), 'complete' (an aggregate rewritten every batch) "
        "or 'update' (changed aggregate rows merged by unique_key)."
    ),
    "bad_trigger": f"Model bad_trigger: trigger {{'every': '5 seconds'}} is not valid. {ALLOWED_TRIGGERS}",
    "bad_watermark": (
        "Model bad_watermark: watermark {'column': 'id', 'within': '1 hour'} is not valid. Give "
        "{column: <event-time column>, delay: <interval>}, e.g. {column: recorded_at, "
        "delay: '10 minutes'}, or a list of those, one per event-time column (a "
        "stream-stream join). Intervals Spark reads: '500 milliseconds', '2.5 seconds', "
        "'10 minutes', '1 hour', '1 day'."
    ),
    "bad_dedupe": (
        "Model bad_dedupe: dedupe {'key': 'id'} is not valid. Give "
        "{keys: [<column>, ...], within_watermark: true|false}."
    ),
    "keyless_update": (
        "Model keyless_update: output_mode 'update' merges each batch's changed rows into the "
        "table by unique_key. Set unique_key to the columns that identify a row (the GROUP BY "
        "columns, window included), e.g. unique_key=['device_id']."
    ),
    "bad_schema_change": (
        "Model bad_schema_change: on_schema_change 'sync_all_columns' is not supported by "
        "streaming_table. Allowed: 'fail' (a new column stops the write) or 'append_new_columns' "
        "(new columns are added to the Delta table)."
    ),
}


def compile_models(dbt, project, *args):
    return dbt("compile", *args, project_dir=project)


def assert_nothing_created(spark, lakehouse, model: str) -> None:
    assert not table_exists(spark, model)
    assert not os.path.exists(lakehouse.checkpoint_path(f"fixtures_out/{model}"))


@pytest.mark.parametrize("model", COMPILE_ERRORS)
def test_dbt_compile_fails_on_a_bad_streaming_config(dbt, errors_project, spark, lakehouse, model):
    result = compile_models(dbt, errors_project, "--select", model)

    assert not result.success
    message = failure_messages(result)
    assert f"Compilation Error in model {model} (models/{model}.sql)" in message
    assert COMPILE_ERRORS[model] in message
    assert_nothing_created(spark, lakehouse, model)


def test_dbt_compile_fails_on_a_misspelt_setting_naming_the_one_meant(
    dbt, errors_project, spark, lakehouse, capfd
):
    result = compile_models(dbt, errors_project, "--select", "misspelt_mode")

    assert not result.success
    message = failure_messages(result)
    assert "Compilation Error in model misspelt_mode (models/misspelt_mode.sql)" in message
    assert (
        "Model misspelt_mode: config 'outptu_mode' is not a streaming_table setting; did you mean "
        "'output_mode'? streaming_table settings: output_mode, unique_key, trigger,"
    ) in message
    assert "did you mean 'output_mode'?" in capfd.readouterr().out  # what dbt printed
    assert_nothing_created(spark, lakehouse, "misspelt_mode")


def test_dbt_compile_fails_on_a_bad_run_wide_trigger(dbt, errors_project, spark, lakehouse):
    result = compile_models(
        dbt, errors_project, "--select", "valid_counts", "--vars", "{stream_trigger: sometimes}"
    )

    assert not result.success
    message = failure_messages(result)
    assert "Compilation Error in model valid_counts (models/valid_counts.sql)" in message
    assert f"Model valid_counts: trigger 'sometimes' is not valid. {ALLOWED_TRIGGERS}" in message
    assert_nothing_created(spark, lakehouse, "valid_counts")


def test_dbt_compile_fails_on_a_shared_checkpoint(dbt, errors_project, spark, lakehouse):
    result = compile_models(dbt, errors_project, "--select", "shares_a")

    assert not result.success
    message = failure_messages(result)
    shared = lakehouse.checkpoint_path("shared/one")
    assert "Compilation Error in model shares_a (models/shares_a.sql)" in message
    assert (
        f"Models shares_a and shares_b resolve to the same checkpoint_location {shared}. Each "
        "streaming model needs a checkpoint of its own: remove checkpoint_location to use the "
        "default, or give each a different one."
    ) in message
    assert not os.path.exists(shared)


def test_dbt_compile_of_a_valid_model_starts_no_stream(dbt, errors_project, spark, lakehouse):
    streams_before = [query.id for query in spark.streams.active]

    result = compile_models(dbt, errors_project, "--select", "valid_counts")

    assert result.success, failure_messages(result)
    compiled = node_results(result)["valid_counts"].node.compiled_code
    assert "from stream(fixtures.events) group by kind" in compiled
    assert [query.id for query in spark.streams.active] == streams_before
    assert_nothing_created(spark, lakehouse, "valid_counts")


def test_watermark_on_a_column_no_input_has_names_the_column_and_the_inputs(dbt, errors_project, spark):
    result = run(dbt, errors_project, "--select", "misplaced_watermark")

    assert not result.success
    message = failure_messages(result)
    assert "Model misplaced_watermark: watermark column 'arrived_at' is not a column" in message
    assert "fixtures.events" in message
    assert not table_exists(spark, "misplaced_watermark")


def test_bad_run_wide_trigger_fails_naming_the_model(dbt, errors_project):
    result = run(dbt, errors_project, "--select", "ok_events", "--vars", "{stream_trigger: sometimes}")

    assert not result.success
    assert "Compilation Error in model ok_events" in failure_messages(result)


def test_shared_checkpoint_fails_before_any_stream_starts(dbt, errors_project, spark, lakehouse):
    result = run(dbt, errors_project, "--select", "shares_a", "shares_b")

    assert not result.success
    message = failure_messages(result)
    assert "Models shares_a and shares_b resolve to the same checkpoint_location" in message, message
    assert "Models shares_b and shares_a resolve to the same checkpoint_location" in message, message
    assert "Nothing was run: every model selected stops on its config" in message, message
    for name in ("shares_a", "shares_b"):
        assert not table_exists(spark, name)
    assert not os.path.exists(lakehouse.checkpoint_path("shared/one"))


def test_a_run_whose_every_model_stops_on_its_config_stops_before_spark_and_others_still_run(
    dbt, errors_project, spark
):
    alone = run(dbt, errors_project, "--select", "misspelt_mode")
    assert not alone.success and alone.result is None  # stopped before any model ran
    message = failure_messages(alone)
    assert "Compilation Error in model misspelt_mode (models/misspelt_mode.sql)" in message, message
    assert "did you mean 'output_mode'?" in message and "stopped before waiting for Spark" in message

    # With a model that can run, the run goes on: the broken one fails on its own.
    beside = run(dbt, errors_project, "--select", "misspelt_mode", "ok_events")
    results = node_results(beside)
    assert results["misspelt_mode"].status == "error" and results["ok_events"].status == "success"


def test_table_model_reads_a_stream_source_as_a_batch(dbt, errors_project, spark):
    result = run(dbt, errors_project, "--select", "landed_snapshot")

    assert result.success, failure_messages(result)
    assert sorted(tuple(r) for r in spark.table("fixtures_out.landed_snapshot").collect()) == [
        (1, "a"), (2, "b")
    ]


@pytest.mark.slow  # a model run again over several runs and changes: not in test-fast
def test_once_trigger_partitioning_and_table_properties(dbt, errors_project, spark):
    result = run(dbt, errors_project, "--select", "configured_events")

    assert result.success, failure_messages(result)
    assert rows_processed(result) == {"configured_events": 6}
    detail = spark.sql("describe detail fixtures_out.configured_events").first()
    assert detail.partitionColumns == ["kind"]
    assert detail.properties.get("delta.appendOnly") == "true"


@pytest.mark.slow  # a model run again over several runs and changes: not in test-fast
def test_lost_checkpoint_stops_the_run_instead_of_duplicating(dbt, errors_project, spark, lakehouse):
    assert run(dbt, errors_project, "--select", "ok_events").success
    assert spark.table("fixtures_out.ok_events").count() == 6
    checkpoint = lakehouse.checkpoint_path("fixtures_out/ok_events")
    shutil.rmtree(checkpoint)

    result = run(dbt, errors_project, "--select", "ok_events")

    assert not result.success
    message = failure_messages(result)
    assert "Model ok_events" in message and "--full-refresh --select ok_events" in message
    assert spark.table("fixtures_out.ok_events").count() == 6

    result = run(dbt, errors_project, "--select", "ok_events", "--full-refresh")
    assert result.success, failure_messages(result)
    assert rows_processed(result) == {"ok_events": 6}
    assert spark.table("fixtures_out.ok_events").count() == 6


def rewrite_model(project: str, name: str, sql: str) -> None:
    Path(project, "models", f"{name}.sql").write_text(sql + "\n")


@pytest.mark.slow  # a model run again over several runs and changes: not in test-fast
def test_query_change_its_checkpoint_cannot_follow_offers_full_refresh(dbt, errors_project, spark):
    assert run(dbt, errors_project, "--select", "evolving_counts").success
    rewrite_model(
        errors_project, "evolving_counts",
        "{{ config(output_mode='complete') }}\n"
        "select id, count(*) as n from stream(fixtures.events) group by id",
    )
    spark.sql("insert into fixtures.events values (9, 'c')")  # state is checked by the next batch

    result = run(dbt, errors_project, "--select", "evolving_counts")

    assert not result.success
    message = failure_messages(result)
    assert "Model evolving_counts" in message and "checkpoint" in message
    assert "--full-refresh --select evolving_counts" in message
    assert "\tat org.apache" not in message

    result = run(dbt, errors_project, "--select", "evolving_counts", "--full-refresh")
    assert result.success, failure_messages(result)
    assert spark.table("fixtures_out.evolving_counts").count() == 7  # one row per id now


@pytest.mark.slow  # a model run again over several runs and changes: not in test-fast
def test_a_new_filter_in_a_stateless_model_keeps_its_checkpoint(dbt, errors_project, spark):
    assert run(dbt, errors_project, "--select", "evolving_filter").success
    rewrite_model(
        errors_project, "evolving_filter",
        "select id, kind from stream(fixtures.events) where kind = 'a'",
    )
    spark.sql("insert into fixtures.events values (7, 'a'), (8, 'b')")

    result = run(dbt, errors_project, "--select", "evolving_filter")

    assert result.success, failure_messages(result)
    table = spark.table("fixtures_out.evolving_filter")
    before = table.where("id <= 6 or id = 9").count()
    assert before == 7  # the first run's rows, kept: the checkpoint went on
    assert [(r.id, r.kind) for r in table.where("id in (7, 8)").collect()] == [(7, "a")]


@pytest.mark.parametrize("watermark", [
    "{column: seen_at, within: 1 hour}",  # not a watermark at all: found reading the config
    "{column: arrived_at, delay: 1 hour}",  # no input has that column: found resolving the query
])
def test_full_refresh_with_a_bad_watermark_touches_neither_table_nor_checkpoint(
    dbt, errors_project, spark, lakehouse, watermark
):
    built = run(dbt, errors_project, "--select", "refreshed_events")
    assert built.success, failure_messages(built)
    rows = spark.table("fixtures_out.refreshed_events").count()
    checkpoint = Path(lakehouse.checkpoint_path("fixtures_out/refreshed_events"))
    offsets = sorted(path.name for path in (checkpoint / "offsets").iterdir())

    refreshed = run(
        dbt, errors_project, "--select", "refreshed_events", "--full-refresh",
        "--vars", f"{{refreshed_watermark: {watermark}}}",
    )

    assert not refreshed.success
    assert "Model refreshed_events: watermark" in failure_messages(refreshed)
    assert spark.table("fixtures_out.refreshed_events").count() == rows > 0
    assert sorted(path.name for path in (checkpoint / "offsets").iterdir()) == offsets
