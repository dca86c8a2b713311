"""reset-checkpoint's arguments and what it reads of the model, without Spark."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from dbt_spark_streaming.commands.operations import dbt_command
from dbt_spark_streaming.lifecycle.reset.checkpoint_reset import (
    CheckpointResetError, Input, Reset, StartingPoint, streaming_inputs,
)
from dbt_spark_streaming.lifecycle.reset.reset_arguments import parse_timestamp
from dbt_spark_streaming.lifecycle.reset.reset_record import normal_table

NOW = 1_800_000_000_000  # ms, 2027-01-15


def test_each_starting_point_is_read_from_its_argument():
    assert StartingPoint.from_args("m", {"from_now": True}, NOW) == StartingPoint("now", timestamp_ms=NOW)
    assert StartingPoint.from_args("m", {"from_version": "7"}, NOW) == StartingPoint("version", version=7)
    assert StartingPoint.from_args("m", {"from_timestamp": "2026-01-31 12:00:00"}, NOW).timestamp_ms == \
        parse_timestamp("m", "2026-01-31T12:00:00Z")
    offsets = StartingPoint.from_args("m", {"from_offsets": {"t": {"0": 5}}}, NOW)
    assert json.loads(offsets.offsets) == {"t": {"0": 5}}


def test_a_time_without_a_zone_is_utc_and_one_with_a_zone_keeps_it():
    assert parse_timestamp("m", "1970-01-01 00:00:01") == 1000
    assert parse_timestamp("m", "1970-01-01T01:00:01+01:00") == 1000
    assert parse_timestamp("m", "1970-01-02") == 86_400_000


@pytest.mark.parametrize("args, said", [
    ({}, "Model m: say where the next run starts reading, with exactly one of"),
    ({"from_now": True, "from_version": 3}, "(given: from_now, from_version)"),
    ({"from_version": "-1"}, "from_version is '-1'; give a Delta version"),
    ({"from_version": True}, "from_version is True"),
    ({"from_timestamp": "yesterday"}, "from_timestamp 'yesterday' is not a time"),
    ({"from_timestamp": "2100-01-01"}, "from_timestamp 2100-01-01 is in the future"),
    ({"from_offsets": "[1]"}, "from_offsets is '[1]'; give Kafka offsets per topic"),
])
def test_a_wrong_argument_names_the_model_and_what_to_give(args, said):
    with pytest.raises(CheckpointResetError) as raised:
        StartingPoint.from_args("m", args, NOW)
    assert said in str(raised.value)


def test_the_command_line_becomes_the_run_operation():
    command = dbt_command("reset-checkpoint", ["--select", "silver_recordings", "--from-version", "12", "--target", "dev"])
    assert command[:3] == ["run-operation", "reset_checkpoint", "--args"]
    assert json.loads(command[3]) == {"select": "silver_recordings", "from_version": 12}
    assert command[4:] == ["--target", "dev"]
    command = dbt_command("reset-checkpoint", ["--select", "m", "--from-now"])
    assert json.loads(command[3]) == {"select": "m", "from_now": True}


def test_the_command_line_refuses_two_starting_points_and_a_bad_one_before_dbt_starts():
    with pytest.raises(SystemExit):
        dbt_command("reset-checkpoint", ["--select", "m", "--from-now", "--from-version", "3"])
    with pytest.raises(CheckpointResetError, match="from_version is 'x'"):
        dbt_command("reset-checkpoint", ["--select", "m", "--from-version", "x"])


def test_streamed_refs_and_sources_are_the_inputs_batch_refs_are_not():
    graph = {
        "nodes": {
            "model.p.up": {"name": "up", "schema": "silver", "alias": "up"},
            "model.p.changing": {"name": "changing", "schema": "silver", "alias": "changing_t"},
            "seed.p.devices": {"name": "devices", "schema": "silver", "alias": "devices"},
        },
        "sources": {"source.p.raw.events": {"source_name": "raw", "name": "events", "schema": "raw",
                                            "identifier": "events_t"}},
    }
    node = {
        "raw_code": "select * from stream({{ ref('up') }}) u join {{ ref('devices') }} d using (id)\n"
                    "union all select * from {{ stream_changes(ref('changing')) }}\n"
                    "union all select * from stream({{ source('raw', 'events') }})",
        "depends_on": {"nodes": ["model.p.up", "seed.p.devices", "model.p.changing"]},
    }
    inputs = streaming_inputs(node, graph, SimpleNamespace(sources=()))
    assert [(i.name, i.table) for i in inputs] == [
        ("up", "silver.up"), ("changing", "silver.changing_t"), ("raw.events", "raw.events_t")]


def test_the_record_reads_back_as_written():
    reset = Reset("m", StartingPoint("now", timestamp_ms=NOW),
                  (Input("up", "delta_table", table="silver.up", latest_version=4), Input("landing.x", "json")), NOW)
    again = Reset.from_json(reset.to_json())
    assert again == reset
    assert again.input_of_table("`spark_catalog`.`silver`.`UP`").latest_version == 4
    assert again.input_named("landing.x").kind == "json"
    assert normal_table("spark_catalog.a.b") == "a.b"


@pytest.mark.parametrize("config, said", [
    (SimpleNamespace(model="m", materialized="copy_into", changes=None, output_mode="append"),
     "Model m: materialized 'copy_into' has no streaming checkpoint to reset"),
    (SimpleNamespace(model="m", materialized="streaming_table", changes=None, output_mode="complete"),
     "Model m: output_mode 'complete' writes aggregates"),
])
def test_models_a_reset_would_corrupt_are_refused_before_spark_is_asked(config, said):
    from dbt_spark_streaming.lifecycle.reset.checkpoint_reset import reset_checkpoint

    with pytest.raises(CheckpointResetError, match=said):
        reset_checkpoint(None, config, "t", [Input("up", "delta_table", table="s.up")], StartingPoint("now", timestamp_ms=NOW))
