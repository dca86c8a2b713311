"""Blue/green redeploy's config and the parts of it that need no Spark (runtime/lifecycle/redeploy.py):
`on_query_change: redeploy` and `rollback_window` read with the model's config, which upstream
models a model streams from so that their swap rebuilds it, the Delta positions read from a
checkpoint's offsets file, and the rollback command's dbt arguments. No JVM."""

from __future__ import annotations

import json

import pytest

from dbt_spark_streaming.commands.operations import dbt_command
from dbt_spark_streaming.config.intervals import parse_duration_seconds
from dbt_spark_streaming.config.model import ModelConfigError, read_model_config
from dbt_spark_streaming.config.query_version import QueryChangeConfigError, policy_from_config
from dbt_spark_streaming.lifecycle.upstream import positions_in_offsets


def node(name: str, sql: str = "select 1", reads: tuple[str, ...] = (), schema: str = "gold",
         materialized: str = "streaming_table", **config) -> dict:
    return {
        "unique_id": f"model.p.{name}", "name": name, "alias": name, "schema": schema,
        "resource_type": "model", "raw_code": sql, "sources": [],
        "depends_on": {"nodes": [f"model.p.{read}" for read in reads]},
        "config": {"materialized": materialized, **config},
    }


SILVER = node("silver", schema="silver")


def read(model: dict, *others: dict):
    nodes = {item["unique_id"]: item for item in (model, *others)}
    return read_model_config(model, {"nodes": nodes, "sources": {}})


@pytest.fixture(autouse=True)
def lakehouse(tmp_path, monkeypatch):
    monkeypatch.setenv("LAKEHOUSE_DIR", str(tmp_path))


# --- on_query_change: redeploy -----------------------------------------------------------------

def test_redeploy_is_a_policy_of_a_streaming_table():
    assert policy_from_config("m", "redeploy", "streaming_table") == "redeploy"
    assert read(node("m", on_query_change="redeploy")).on_query_change == "redeploy"


def test_redeploy_of_a_cdc_table_is_refused_naming_the_model_and_streaming_table():
    with pytest.raises(QueryChangeConfigError) as refused:
        policy_from_config("changes", "redeploy", "cdc_table")
    message = str(refused.value)
    assert "Model changes" in message and "streaming_table" in message and "'redeploy'" in message


# --- rollback_window ---------------------------------------------------------------------------

def test_rollback_window_defaults_to_seven_days_and_keeps_a_given_duration():
    assert read(node("m")).rollback_window == "7 days"
    assert read(node("m", on_query_change="redeploy", rollback_window="2 hours")).rollback_window == "2 hours"


@pytest.mark.parametrize("value", ["soon", 7, "1.5 days"])
def test_a_rollback_window_that_is_not_a_duration_is_refused_naming_the_model(value):
    with pytest.raises(ModelConfigError, match="Model m: rollback_window") as refused:
        read(node("m", rollback_window=value))
    assert repr(value) in str(refused.value)


@pytest.mark.parametrize("value, seconds", [
    ("7 days", 604800), ("500 milliseconds", 0.5), ("2 hours", 7200), ("soon", None), (None, None),
])
def test_durations_are_read_in_seconds(value, seconds):
    assert parse_duration_seconds(value) == seconds


# --- the upstream models whose swap rebuilds this one ------------------------------------------

@pytest.mark.parametrize("sql", [
    "select * from stream({{ ref('silver') }}) where ok",
    "select * from stream( {{ref(\"silver\")}} )",
    "select * from {{ stream_appends(ref('silver')) }}",
    # a plain read beside one that follows changes still cannot go on over the swap
    "select * from {{ stream_changes(ref('silver')) }} c join stream({{ ref('silver') }}) s using (id)",
])
def test_a_plain_streaming_read_of_a_streaming_table_is_listed(sql):
    gold = node("gold", sql, reads=("silver",))
    assert read(gold, SILVER).streamed_models == ("silver.silver",)


@pytest.mark.parametrize("sql", [
    "select * from {{ stream_changes(ref('silver')) }}",
    "select * from stream({{ ref('silver') }}) with ('readChangeFeed' = 'true')",
    "select * from {{ ref('silver') }}",
])
def test_reads_that_follow_changes_and_batch_reads_are_not_listed(sql):
    gold = node("gold", sql, reads=("silver",))
    assert read(gold, SILVER).streamed_models == ()


def test_a_stream_of_a_model_that_is_not_streamed_itself_is_not_listed():
    dim = node("dim", materialized="table", schema="silver")
    gold = node("gold", "select * from stream({{ ref('dim') }})", reads=("dim",))
    assert read(gold, dim).streamed_models == ()


def test_a_stream_read_inside_an_ephemeral_model_is_listed_for_its_readers():
    readable = node("readable", "select * from stream({{ ref('silver') }})", reads=("silver",),
                    materialized="ephemeral")
    gold = node("gold", "select * from {{ ref('readable') }}", reads=("readable",))
    assert read(gold, SILVER, readable).streamed_models == ("silver.silver",)


def test_the_upstream_is_named_by_its_alias():
    aliased = {**SILVER, "alias": "silver_v2"}
    gold = node("gold", "select * from stream({{ ref('silver') }})", reads=("silver",))
    assert read(gold, aliased).streamed_models == ("silver.silver_v2",)


# --- Delta positions in a checkpoint's offsets file --------------------------------------------

METADATA = json.dumps({
    "batchWatermarkMs": 0, "batchTimestampMs": 1767225600000,
    "conf": {"spark.sql.shuffle.partitions": "4"},
})


def offsets(*sources: str) -> str:
    return "\n".join(["v1", METADATA, *sources])


def test_a_delta_source_position_is_read_by_its_table_id():
    delta = ('{"sourceVersion":1,"reservoirId":"abc","reservoirVersion":2,"index":-1,'
             '"isStartingVersion":false}')
    assert positions_in_offsets(offsets(delta, "-")) == {"abc": (2, False)}
    assert positions_in_offsets(offsets(delta, '{"logOffset":3}')) == {"abc": (2, False)}


def test_a_position_within_the_starting_snapshot_says_so_and_other_sources_are_left_out():
    snapshot = ('{"sourceVersion":1,"reservoirId":"def","reservoirVersion":5,"index":12,'
                '"isStartingVersion":true}')
    kafka = '{"events":{"0":1200,"1":1180}}'
    assert positions_in_offsets(offsets(kafka, snapshot)) == {"def": (5, True)}


def test_the_metadata_line_is_not_taken_for_a_source():
    # Even a metadata line that happened to hold the keys is not a source's offset.
    metadata = '{"reservoirId":"meta","reservoirVersion":9}'
    assert positions_in_offsets("\n".join(["v1", metadata, "-"])) == {}


# --- dbt-spark-streaming rollback ------------------------------------------------------------------

def test_rollback_runs_the_rollback_redeploy_operation_with_the_model():
    command = dbt_command("rollback", ["--select", "m", "--target", "dev"])
    assert command == ["run-operation", "rollback_redeploy", "--args", '{"select": "m"}', "--target", "dev"]


def test_rollback_passes_vars_and_the_project_dir():
    command = dbt_command("rollback", ["-s", "m", "--vars", "{stream_trigger: {once: true}}",
                                       "--project-dir", "/p"])
    assert command[-4:] == ["--vars", "{stream_trigger: {once: true}}", "--project-dir", "/p"]


def test_rollback_needs_a_model():
    with pytest.raises(SystemExit):
        dbt_command("rollback", [])
