"""A streaming_table's `backfills` read with its config (runtime/config/backfills.py through
config/model.py): what a valid one becomes, every error naming the model and the setting, and the
backfill's Delta transaction passed over where a stream looks for its own last batch. No JVM."""

from __future__ import annotations

import json

import pytest

from dbt_spark_streaming.config.backfills import Backfill, BackfillConfigError
from dbt_spark_streaming.errors import ConfigError
from dbt_spark_streaming.config.model import read_model_config
from dbt_spark_streaming.writes.batch_marks import batch_mark, recorded_batch


FILES = {"source_name": "landing", "name": "events",
         "meta": {"stream": {"format": "json", "path": "events", "schema": "id int"}}}


def node(materialized: str = "streaming_table", **config):
    return {
        "name": "readings", "alias": "readings", "schema": "bronze", "unique_id": "model.p.readings",
        "resource_type": "model", "sources": [["landing", "events"]],
        "config": {"materialized": materialized, **config},
    }


def read(**config):
    model = node(**config)
    return read_model_config(model, {"nodes": {model["unique_id"]: model}, "sources": {"s": FILES}})


@pytest.fixture(autouse=True)
def lakehouse(tmp_path, monkeypatch):
    monkeypatch.setenv("LAKEHOUSE_DIR", str(tmp_path))


def test_each_backfill_is_read_into_its_type_with_its_transaction_id():
    config = read(backfills=[
        {"name": "archive_2025", "path": "archive/2025", "format": "CSV", "options": {"header": True, "sep": ";"}},
        {"name": "legacy", "table": "old.readings"},
    ])

    assert config.backfills == (
        Backfill("archive_2025", "csv", path="archive/2025", options={"header": "true", "sep": ";"}),
        Backfill("legacy", "delta", table="old.readings"),
    )
    assert config.backfills[0].app_id == "backfill:archive_2025"
    assert read().backfills == () and read(backfills=[]).backfills == ()


@pytest.mark.parametrize("config, named", [
    ({"output_mode": "complete"}, "output_mode 'complete'"),
    ({"output_mode": "update", "unique_key": "device_id"}, "output_mode 'update'"),
    ({"materialized": "cdc_table", "keys": ["id"], "sequence_by": "lsn"}, "cdc_table"),
    ({"materialized": "copy_into"}, "copy_into"),
])
def test_a_backfill_on_a_model_that_does_not_append_is_refused_saying_why(config, named):
    backfills = [{"name": "archive", "path": "archive", "format": "json"}]
    with pytest.raises(ConfigError) as raised:
        read(backfills=backfills, **config)

    message = str(raised.value)
    assert message.startswith("Model readings: backfills") and named in message, message
    assert "output_mode 'append'" in message


@pytest.mark.parametrize("backfills, named", [
    ({"name": "a", "path": "x", "format": "json"}, "must be a list"),
    (["archive"], "backfills[0] is 'archive'"),
    ([{"path": "x", "format": "json"}], "backfills[0] needs a name"),
    ([{"name": "2025 archive", "path": "x", "format": "json"}], "needs a name"),
    ([{"name": "a", "path": "x", "format": "json", "schema": "id int"}], "backfill a: 'schema' is not a backfill setting"),
    ([{"name": "a", "format": "json"}], "neither is set"),
    ([{"name": "a", "path": "x", "table": "t"}], "not both"),
    ([{"name": "a", "path": "x", "format": "avro"}], "format 'avro' is not supported"),
    ([{"name": "a", "path": "x"}], "format None is not supported"),
    ([{"name": "a", "table": "t", "format": "json"}], "a table is read as Delta"),
    ([{"name": "a", "path": "x", "format": "json", "options": ["header"]}], "options must be a mapping"),
    ([{"name": "a", "path": "x", "format": "json"}, {"name": "a", "path": "y", "format": "json"}], "used twice"),
])
def test_a_backfill_of_the_wrong_shape_names_the_model_and_the_setting(backfills, named):
    with pytest.raises(BackfillConfigError) as raised:
        read(backfills=backfills)

    assert str(raised.value).startswith("Model readings: ") and named in str(raised.value), str(raised.value)


def test_a_misspelt_backfills_key_is_caught():
    with pytest.raises(ConfigError, match="did you mean 'backfills'"):
        read(backfill=[{"name": "a", "path": "x", "format": "json"}])


def test_a_backfill_commit_is_no_batch_of_the_stream_so_the_one_behind_it_is_still_found():
    """A stream starting again reads the table's commits back to its last batch; a backfill
    committed since (its own Delta transaction) must not hide it, or a replayed batch would be
    appended twice."""
    backfill = "\n".join(json.dumps(action) for action in (
        {"commitInfo": {"operation": "WRITE", "userMetadata": json.dumps({"backfill": "archive"})}},
        {"txn": {"appId": "backfill:archive", "version": 1, "lastUpdated": 0}},
    ))
    batch = json.dumps({"commitInfo": {"operation": "WRITE", "userMetadata": batch_mark("q1", 4)}})

    assert recorded_batch(backfill) is None
    assert recorded_batch(batch) == ("q1", 4)
