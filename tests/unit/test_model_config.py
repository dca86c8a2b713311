"""A model's config read once (runtime/config/model.py): every setting, and every error it raises."""

from __future__ import annotations

import pytest

from dbt_spark_streaming.errors import ConfigError
from dbt_spark_streaming.config.event_time import Dedupe, Watermark
from dbt_spark_streaming.config.intervals import is_interval
from dbt_spark_streaming.config.model import ModelConfigError, read_model_config
from dbt_spark_streaming.sources.views import StreamSourceConfigError
from dbt_spark_streaming.config.triggers import Trigger
from dbt_spark_streaming.config.settings import allowed as allowed_settings


def node(name: str = "counts", materialized: str = "streaming_table", sources=(), **config):
    return {
        "name": name, "alias": name, "schema": "gold", "unique_id": f"model.p.{name}",
        "resource_type": "model", "sources": [list(source) for source in sources],
        "config": {"materialized": materialized, **config},
    }


def source(table: str = "events", **stream):
    return {"source_name": "landing", "name": table, "meta": {"stream": stream} if stream else {}}


def graph(*nodes, sources=()):
    return {
        "nodes": {item["unique_id"]: item for item in nodes},
        "sources": {f"source.p.landing.{item['name']}": item for item in sources},
    }


def read(model, *others, sources=(), run_vars=None):
    return read_model_config(model, graph(model, *others, sources=sources), run_vars)


@pytest.fixture(autouse=True)
def lakehouse(tmp_path, monkeypatch):
    monkeypatch.setenv("LAKEHOUSE_DIR", str(tmp_path))
    return tmp_path


FILES = source(format="json", path="events", schema="id int")


# --- what a valid config becomes ---------------------------------------------------------------

def test_defaults_of_a_streaming_table(lakehouse):
    config = read(node())

    assert (config.output_mode, config.trigger, config.model_trigger) == (
        "append", Trigger("available_now"), Trigger("available_now"))
    assert config.checkpoint.endswith("gold/counts") and str(lakehouse) in config.checkpoint
    assert (config.unique_key, config.partition_by, config.watermarks, config.dedupe) == ((), (), (), None)
    assert config.append_new_columns is False


def test_every_setting_is_read_once_into_its_type():
    config = read(node(
        output_mode="update", unique_key="device", partition_by=["day"], trigger="5 seconds",
        watermark={"column": "at", "delay": "10 minutes"}, dedupe={"keys": "id"},
        tblproperties={"delta.appendOnly": "false"}, on_schema_change="append_new_columns",
        checkpoint_location="elsewhere/counts",
    ))

    assert config.unique_key == ("device",) and config.partition_by == ("day",)
    assert config.trigger == Trigger("processing_time", "5 seconds")
    assert config.watermarks == (Watermark("at", "10 minutes"),)
    assert config.dedupe == Dedupe(("id",), True)
    assert config.append_new_columns is True
    assert config.checkpoint.endswith("elsewhere/counts")
    assert config.documented() == {
        "streaming.output_mode": "update",
        "streaming.trigger": "processing time, every 5 seconds",
        "streaming.checkpoint": config.checkpoint,
        # rows change in place: readers downstream stream its changes
        "delta.enableChangeDataFeed": "true",
    }


def test_a_run_wide_trigger_wins_and_the_docs_say_so():
    config = read(node(trigger={"once": True}), run_vars={"stream_trigger": "500 milliseconds"})

    assert config.trigger == Trigger("processing_time", "500 milliseconds")
    assert config.model_trigger == Trigger("once")
    assert "run-wide" in config.documented()["streaming.trigger"]


def test_the_sources_a_model_reads_are_checked_and_kept():
    config = read(node(sources=[("landing", "events")]), sources=[FILES, source("other")])

    assert [read.name for read in config.sources] == ["landing.events"]
    assert config.sources[0].source.format == "json"


def test_a_stream_source_read_without_the_projects_source_macro_names_the_command():
    without = {**node(sources=[("landing", "events")]), "depends_on": {"macros": ["macro.p.ref"]}}
    with pytest.raises(ModelConfigError) as error:
        read(without, sources=[FILES])
    assert str(error.value).startswith("Model counts: it reads landing.events, declared with meta.stream")
    assert "Run `dbt-spark-streaming init` in the project's folder" in str(error.value)

    with_it = {**without, "depends_on": {"macros": ["macro.p.source", "macro.p.ref"]}}
    assert [read.name for read in read(with_it, sources=[FILES]).sources] == ["landing.events"]
    plain = {**node(sources=[("landing", "other")]), "depends_on": {"macros": []}}  # no meta.stream
    assert read(plain, sources=[source("other")]).sources == ()


def test_copy_into_reads_its_one_file_source_and_load_log():
    model = node("loads", "copy_into", sources=[("landing", "events")], load_log_location="logs/loads")

    config = read(model, sources=[FILES], run_vars={"copy_into_force": "true"})

    assert config.copy_source.name == "landing.events"
    assert config.checkpoint.endswith("logs/loads") and config.force is True
    assert config.documented() == {"copy_into.load_log": config.checkpoint}


# --- every error, with what it tells the person ------------------------------------------------

ERRORS = {
    "not streaming": (
        node(materialized="table"), "materialized 'table' is not a streaming materialisation"),
    "output mode": (
        node(output_mode="upsert"),
        "Model counts: output_mode 'upsert' is not supported by streaming_table. Allowed values: "
        "'append'"),
    "update without key": (
        node(output_mode="update"),
        "Model counts: output_mode 'update' merges each batch's changed rows into the table by "
        "unique_key. Set unique_key"),
    "trigger kind": (
        node(trigger={"every": "5 seconds"}), "Model counts: trigger {'every': '5 seconds'} is not valid"),
    "two triggers": (
        node(trigger={"once": True, "available_now": True}), "Model counts: trigger"),
    "trigger interval": (
        node(trigger="1.5 minutes"), "Model counts: trigger '1.5 minutes' is not valid"),
    "trigger type": (node(trigger=5), "Model counts: trigger 5 is not valid"),
    "schema change": (
        node(on_schema_change="sync_all_columns"),
        "Model counts: on_schema_change 'sync_all_columns' is not supported by streaming_table. "
        "Allowed: 'fail'"),
    "misspelt setting": (
        node(outputmode="complete"),
        "Model counts: config 'outputmode' is not a streaming_table setting; did you mean "
        "'output_mode'?"),
    "watermark keys": (
        node(watermark={"column": "at", "within": "1 hour"}),
        "Model counts: watermark {'column': 'at', 'within': '1 hour'} is not valid"),
    "watermark delay": (
        node(watermark={"column": "at", "delay": "1.5 hours"}),
        "Model counts: watermark {'column': 'at', 'delay': '1.5 hours'} is not valid"),
    "watermark twice": (
        node(watermark=[{"column": "at", "delay": "1 hour"}, {"column": "at", "delay": "2 hours"}]),
        "Model counts: watermark names column 'at' twice"),
    "dedupe": (
        node(dedupe={"key": "id"}),
        "Model counts: dedupe {'key': 'id'} is not valid. Give {keys: [<column>, ...], "
        "within_watermark: true|false}."),
    "dedupe keys": (node(dedupe={"keys": []}), "Model counts: dedupe {'keys': []} is not valid"),
    "copy force": (
        node("loads", "copy_into", sources=[("landing", "events")], force="yes"),
        "Model loads: force 'yes' is not valid; give true"),
    "copy without source": (
        node("loads", "copy_into"),
        "Model loads: copy_into loads the files of one source declared with meta.stream"),
}


@pytest.mark.parametrize("case", ERRORS)
def test_a_bad_setting_names_the_model_the_setting_and_what_is_allowed(case):
    model, message = ERRORS[case]

    with pytest.raises(ConfigError) as raised:
        read(model, sources=[FILES])

    assert message in str(raised.value)


def test_a_shared_checkpoint_names_both_models():
    first = node("a", checkpoint_location="shared/one")
    second = node("b", checkpoint_location="shared/one")

    with pytest.raises(ModelConfigError, match="Models a and b resolve to the same checkpoint_location"):
        read(first, second)


def test_copy_into_refuses_a_source_that_is_not_files():
    kafka = source(format="kafka", bootstrap_servers="localhost:9092", topic="t")
    model = node("loads", "copy_into", sources=[("landing", "events")])

    with pytest.raises(ModelConfigError, match="copy_into loads files; source landing.events is kafka"):
        read(model, sources=[kafka])


def test_copy_into_refuses_an_archived_source():
    archived = source(format="json", path="events", schema="id int", archive_to="done")
    model = node("loads", "copy_into", sources=[("landing", "events")])

    with pytest.raises(ModelConfigError, match="has archive_to, so a streaming reader moves its files"):
        read(model, sources=[archived])


def test_an_archived_source_with_two_streaming_readers_is_refused():
    archived = source(format="json", path="events", schema="id int", archive_to="done")
    first = node("bronze", sources=[("landing", "events")])
    second = node("other", sources=[("landing", "events")])

    with pytest.raises(ModelConfigError, match="Source landing.events has archive_to set and is read "
                                               "as a stream by bronze, other"):
        read(first, second, sources=[archived])


def test_copy_into_refuses_a_source_that_deletes_its_files():
    deleting = source(format="json", path="events", schema="id int", delete_processed=True)
    model = node("loads", "copy_into", sources=[("landing", "events")])

    with pytest.raises(ModelConfigError, match="source landing.events has delete_processed, so a "
                                               "streaming reader deletes its files; copy_into"):
        read(model, sources=[deleting])


def test_a_deleting_source_with_two_streaming_readers_is_refused():
    deleting = source(format="json", path="events", schema="id int", delete_processed=True)
    first = node("bronze", sources=[("landing", "events")])
    second = node("other", sources=[("landing", "events")])

    with pytest.raises(ModelConfigError) as error:
        read(first, second, sources=[deleting])
    message = str(error.value)
    assert message.startswith("Source landing.events has delete_processed set and is read as a "
                              "stream by bronze, other. The first to process a file deletes it before "
                              "the others read it.")
    assert message.endswith("or remove delete_processed.")


def test_one_streaming_reader_of_a_deleting_source_is_fine():
    deleting = source(format="json", path="events", schema="id int", delete_processed=True)
    bronze = node("bronze", sources=[("landing", "events")])

    (read_source,) = read(bronze, sources=[deleting]).sources
    assert (read_source.source.clean_source, read_source.source.clean_source_setting) == ("delete", "delete_processed")


def test_an_unknown_meta_stream_key_is_an_error_not_ignored():
    typo = source(format="json", path="events", schema="id int", max_file_per_trigger=1)

    with pytest.raises(StreamSourceConfigError) as raised:
        read(node(sources=[("landing", "events")]), sources=[typo])

    message = str(raised.value)
    assert "Source landing.events: meta.stream.max_file_per_trigger is not a setting of json sources" in message
    assert "max_files_per_trigger" in message and "meta.stream.options" in message


def test_every_config_error_is_one_kind_the_adapter_reports():
    assert issubclass(ModelConfigError, ConfigError) and issubclass(StreamSourceConfigError, ConfigError)


# --- one interval grammar, Spark's --------------------------------------------------------------

@pytest.mark.parametrize("text", ["500 milliseconds", "2.5 seconds", "1 second", "10 minutes",
                                  "1 hour", "2 days", "1 week", " 3 MINUTES "])
def test_intervals_spark_reads(text):
    assert is_interval(text)


@pytest.mark.parametrize("text", ["1.5 minutes", "1.5 days", "0.5 milliseconds", "ten seconds",
                                  "5", "5 fortnights", "", None])
def test_intervals_spark_refuses(text):
    assert not is_interval(text)


def test_the_watermark_and_the_trigger_agree_on_intervals():
    for text in ("2.5 seconds", "2 days"):
        assert Watermark.from_config("m", {"column": "at", "delay": text}).delay == text
        assert Trigger.parse(text).interval == text


def test_maintenance_settings_become_the_tables_retention_properties():
    config = read(node(file_retention="1 hour", rollback_window="2 days"))
    assert config.maintenance.file_retention == "1 hour" and config.maintenance.log_retention == "2 minutes"
    assert config.tblproperties["delta.deletedFileRetentionDuration"] == "interval 1 hour"
    # Delta's own clean-up, which knows no guard, keeps at least what a rollback may need
    assert config.tblproperties["delta.logRetentionDuration"] == "interval 2 days"
    longer = read(node(log_retention="30 days", rollback_window="2 days"))
    assert longer.maintenance.log_retention_seconds == 30 * 86400
    assert longer.tblproperties["delta.logRetentionDuration"] == "interval 30 days"
    untouched = read(node(maintenance=False))
    assert not untouched.maintenance.enabled and "delta.logRetentionDuration" not in untouched.tblproperties
    for materialized in ("cdc_table", "copy_into"):
        assert "file_retention" in allowed_settings(materialized)


def test_a_log_retention_shorter_than_the_rollback_window_is_taken_the_guard_keeps_the_rollback():
    config = read(node(log_retention="1 day", rollback_window="3 days"))
    assert config.maintenance.log_retention == "1 day"
    assert config.tblproperties["delta.logRetentionDuration"] == "interval 3 days"
    with pytest.raises(ConfigError, match="log_retention 'a while' is not a duration"):
        read(node(log_retention="a while"))


@pytest.mark.parametrize("key,setting", [("delta.deletedFileRetentionDuration", "file_retention"),
                                         ("delta.logRetentionDuration", "log_retention")])
def test_delta_retention_properties_written_by_hand_are_refused_for_the_setting(key, setting):
    with pytest.raises(ConfigError, match=f"tblproperties sets {key}; set {setting}='30 days' instead"):
        read(node(tblproperties={key: "interval 30 days"}))


def test_maintenance_settings_that_are_not_what_they_say_are_refused():
    with pytest.raises(ConfigError, match="maintenance 'yes' is not true or false"):
        read(node(maintenance="yes"))
    with pytest.raises(ConfigError, match="file_retention 'a while' is not a duration"):
        read(node(file_retention="a while"))
