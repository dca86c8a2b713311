"""A cdc_table's settings (runtime/config/cdc.py, read through model_config): what is kept, and every
mistake refused before anything runs, naming the model and the setting."""

from __future__ import annotations

import pytest

from dbt_spark_streaming.config.cdc import ApplyChanges
from dbt_spark_streaming.errors import ConfigError
from dbt_spark_streaming.config.model import read_model_config

FEED = ["mrn", "ward", "op", "lsn", "changed_at"]
BASE = {"keys": ["mrn"], "sequence_by": "lsn", "apply_as_deletes": "op = 'D'", "except_columns": ["op"]}


def node(name: str = "patients", raw_code: str = "", materialized: str = "cdc_table", **config):
    return {
        "name": name, "alias": name, "schema": "silver", "unique_id": f"model.p.{name}",
        "resource_type": "model", "sources": [], "raw_code": raw_code,
        "config": {"materialized": materialized, **config},
    }


def read(model, *others):
    graph = {"nodes": {n["unique_id"]: n for n in (model, *others)}, "sources": {}}
    return read_model_config(model, graph)


@pytest.fixture(autouse=True)
def lakehouse(tmp_path, monkeypatch):
    monkeypatch.setenv("LAKEHOUSE_DIR", str(tmp_path))


def refused(match: str, **config) -> None:
    with pytest.raises(ConfigError, match=match) as error:
        read(node(**config))
    assert "Model patients" in str(error.value)


def test_the_settings_are_read_into_one_object_and_shown_in_the_docs():
    config = read(node(**{**BASE, "sequence_by": ["changed_at", "lsn"]}, stored_as="scd2",
                       track_history_columns=["ward"], output_mode="append"))

    changes = config.changes
    assert changes.keys == ("mrn",) and changes.sequence_by == ("changed_at", "lsn")
    assert changes.stored_as == "scd2" and changes.except_columns == ("op",)
    assert changes.stored_columns(FEED) == ["mrn", "ward", "lsn", "changed_at"]
    assert changes.tracked_columns(changes.stored_columns(FEED)) == ["ward"]
    assert config.companion_tables("silver.patients") == ["silver.patients__tombstones"]
    documented = config.documented()
    assert documented["streaming.output_mode"] == "apply changes (scd2)"
    assert documented["cdc.keys"] == "mrn" and documented["delta.enableChangeDataFeed"] == "true"


@pytest.mark.parametrize("config, match", [
    ({**BASE, "keys": None}, "needs keys"),
    ({**BASE, "sequence_by": None}, "needs sequence_by"),
    ({**BASE, "stored_as": "scd3"}, "stored_as 'scd3' is not supported"),
    ({**BASE, "track_history_columns": ["ward"]}, "apply to stored_as='scd2' only"),
    ({**BASE, "stored_as": "scd2", "track_history_columns": ["ward"],
      "track_history_except_columns": ["lsn"]}, "not both"),
    ({**BASE, "stored_as": "scd2", "apply_as_truncates": "op = 'T'"}, "apply_as_truncates"),
    ({**BASE, "except_columns": ["op", "mrn"]}, "except_columns drops mrn"),
    ({**BASE, "except_columns": ["op", "lsn"]}, "except_columns drops lsn"),
    ({**BASE, "ignore_null_updates": "sometimes"}, "ignore_null_updates 'sometimes'"),
    ({**BASE, "tombstone_retention": "2 fortnights"}, "tombstone_retention"),
    ({**BASE, "apply_as_deletes": ["op = 'D'"]}, "is not a SQL condition"),
    ({**BASE, "output_mode": "update"}, "output_mode 'update'"),
    ({**BASE, "key": "mrn", "keys": None}, "did you mean 'keys'"),
    ({**BASE, "sequence": "lsn", "sequence_by": None}, "did you mean 'sequence_by'"),
])
def test_a_bad_setting_is_refused_naming_the_model_and_the_setting(config, match):
    refused(match, **config)


def test_scd2_may_drop_its_sequence_columns_its_validity_keeps_them():
    config = read(node(**{**BASE, "except_columns": ["op", "lsn"]}, stored_as="scd2"))
    assert config.changes.stored_columns(FEED) == ["mrn", "ward", "changed_at"]


@pytest.mark.parametrize("settings, match", [
    ({"track_history_columns": ["room"]}, "track_history_columns names room"),
    ({"keys": ["patient"]}, "keys names patient"),
    ({"except_columns": ["__start_at"]}, "except_columns names __start_at"),
])
def test_columns_are_checked_against_the_query(settings, match):
    changes = ApplyChanges.from_config("patients", {**BASE, "stored_as": "scd2", **settings})
    with pytest.raises(ConfigError, match=match):
        changes.check_columns(FEED)


def test_a_validity_column_the_query_already_selects_is_refused():
    changes = ApplyChanges.from_config("patients", {**BASE, "stored_as": "scd2"})
    with pytest.raises(ConfigError, match="__end_at"):
        changes.check_columns([*FEED, "__end_at"])


@pytest.mark.parametrize("upstream", [
    {"materialized": "cdc_table", **BASE},
    {"materialized": "streaming_table", "output_mode": "update", "unique_key": "mrn"},
])
def test_a_plain_stream_of_a_table_kept_by_merge_is_refused_naming_both_reads(upstream):
    reader = node("ward_moves", "select * from stream({{ ref('patients') }})", "streaming_table")
    with pytest.raises(ConfigError) as error:
        read(reader, node(**upstream))
    message = str(error.value)
    assert "Model ward_moves" in message and "stream_changes(ref('patients'))" in message
    assert "stream_appends(ref('patients'))" in message


def test_reading_changes_or_appends_of_it_is_accepted():
    for sql in ("select * from {{ stream_changes(ref('patients')) }}",
                "select * from stream({{ ref('patients') }}) with ('skipChangeCommits' = 'true')"):
        reader = node("ward_moves", sql, "streaming_table")
        assert read(reader, node(**BASE)).model == "ward_moves"


def test_on_sequence_tie_defaults_to_fail_and_refuses_an_unknown_policy():
    assert ApplyChanges.from_config("patients", BASE).on_sequence_tie == "fail"
    assert ApplyChanges.from_config("patients", {**BASE, "on_sequence_tie": "keep_last_landed"}).on_sequence_tie \
        == "keep_last_landed"
    with pytest.raises(ConfigError, match="on_sequence_tie 'keep_first' is not valid.*keep_last_landed"):
        ApplyChanges.from_config("patients", {**BASE, "on_sequence_tie": "keep_first"})


@pytest.mark.parametrize("settings, said", [
    ({"stored_as": "scd2"}, "stored_as was 'scd1' and is 'scd2' now"),
    ({"keys": ["id"]}, "keys was 'mrn' and is 'id' now"),
    ({"sequence_by": ["changed_at", "lsn"]}, "sequence_by was 'lsn' and is 'changed_at, lsn' now"),
    ({"except_columns": []}, "except_columns was 'op' and is not set now"),
])
def test_a_changed_shape_is_refused_naming_the_setting_both_values_and_the_fix(settings, said):
    from dbt_spark_streaming.errors import StreamingModelError

    built = ApplyChanges.from_config("patients", BASE).shape()
    changed = ApplyChanges.from_config("patients", {**BASE, **settings})
    with pytest.raises(StreamingModelError) as error:
        changed.refuse_shape_change("silver.patients", built)
    assert said in str(error.value)
    assert "`dbt run --full-refresh --select patients+`" in str(error.value)


def test_settings_that_change_in_place_and_tables_built_before_the_shape_was_recorded_pass():
    built = ApplyChanges.from_config("patients", BASE).shape()
    same_shape = {**BASE, "ignore_null_updates": True, "on_sequence_tie": "keep_last_landed",
                  "apply_as_deletes": "op in ('D', 'X')", "tombstone_retention": "7 days"}
    ApplyChanges.from_config("patients", same_shape).refuse_shape_change("silver.patients", built)
    older = {key: built[key] for key in ("cdc.stored_as", "cdc.keys", "cdc.sequence_by")}
    ApplyChanges.from_config("patients", {**BASE, "except_columns": []}).refuse_shape_change("silver.patients", older)
    scd2 = ApplyChanges.from_config("patients", {**BASE, "stored_as": "scd2"})
    with pytest.raises(Exception, match="track_history_columns was not set and is 'ward' now"):
        ApplyChanges.from_config("patients", {**BASE, "stored_as": "scd2", "track_history_columns": ["ward"]}) \
            .refuse_shape_change("silver.patients", scd2.shape())
