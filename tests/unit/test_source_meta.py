"""A source's `meta.stream` settings, checked when dbt reads the source: each mistake names the
source, the setting and the fix (adapter/dbt_spark_streaming/sources/views.py)."""

from __future__ import annotations

import re

import pytest

from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.sources.views import (
    SourceViews,
    StreamSource,
    StreamSourceConfigError,
    file_source_schema,
    landing_folder,
    source_view_name,
)

NAME = "landing.recordings"


def from_meta(**meta) -> StreamSource:
    return StreamSource.from_meta(NAME, meta)


def refused(**meta) -> str:
    with pytest.raises(StreamSourceConfigError) as error:
        from_meta(**meta)
    message = str(error.value)
    assert message.startswith(f"Source {NAME}: "), message
    return message


def test_a_json_source_with_options_and_a_rate_limit():
    source = from_meta(
        format="JSON", path="recordings", options={"multiLine": True, "samplingRatio": 0.5},
        max_files_per_trigger=10,
    )
    assert (source.name, source.format, source.path) == (NAME, "json", "recordings")
    assert source.options == {"multiLine": "true", "samplingRatio": "0.5", "maxFilesPerTrigger": "10"}
    assert source.schema_evolution == "add_new_columns"  # inferred schema: new columns added
    assert source.corrupt_record_column == "_corrupt_record"
    assert (source.create_path, source.archive_to, source.rescued_data_column) == (False, None, None)


def test_a_declared_schema_fails_on_new_columns_unless_it_rescues_them():
    assert from_meta(format="json", path="p", schema="id int").schema_evolution == "fail_on_new_columns"
    rescuing = from_meta(format="json", path="p", schema="id int", rescued_data_column="_rescued")
    assert rescuing.schema_evolution == "rescue"


def test_a_delta_source_has_no_schema_policy_and_takes_a_byte_limit():
    source = from_meta(format="delta", path="/tables/events", max_bytes_per_trigger="1048576")
    assert source.schema_evolution is None
    assert source.options == {"maxBytesPerTrigger": "1048576"}
    assert source.corrupt_record_column is None


def test_a_csv_header_given_as_a_yaml_boolean_counts():
    source = from_meta(format="csv", path="p", options={"header": True}, schema_evolution="add_new_columns")
    assert source.options["header"] == "true"
    assert source.schema_evolution == "add_new_columns"


def test_headerless_csv_with_a_schema_reads_columns_by_position():
    assert from_meta(format="csv", path="p", schema="a int, b string").schema_evolution == "none"


@pytest.mark.parametrize("options, column", [
    ({}, "_corrupt_record"),
    ({"ColumnNameOfCorruptRecord": "_bad"}, "_bad"),
    ({"mode": "dropMalformed"}, None),
    ({"mode": "permissive"}, "_corrupt_record"),
])
def test_the_corrupt_record_column_follows_the_read_mode(options, column):
    assert from_meta(format="csv", path="p", schema="a int", options=options).corrupt_record_column == column


def test_a_parquet_source_has_no_corrupt_record_column():
    assert from_meta(format="parquet", path="p").corrupt_record_column is None


@pytest.mark.parametrize("meta, setting", [
    ({}, "meta.stream.format is None; use one of json, csv, parquet, delta, kafka."),
    ({"format": "avro"}, "meta.stream.format is 'avro'; use one of json, csv, parquet, delta, kafka."),
])
def test_an_unknown_format_lists_the_formats(meta, setting):
    assert refused(path="p", **meta) == f"Source {NAME}: {setting}"


def test_create_path_must_be_a_boolean():
    message = refused(format="json", path="p", create_path="yes")
    assert "meta.stream.create_path is 'yes'; give true (create the folder" in message
    assert "or false (the default: a missing folder is an error)" in message


@pytest.mark.parametrize("meta, setting", [
    ({"format": "delta", "path": "p", "create_path": True}, "create_path"),
    ({"format": "delta", "path": "p", "archive_to": "archive"}, "archive_to"),
    ({"format": "delta", "path": "p", "delete_processed": True}, "delete_processed"),
    ({"format": "kafka", "bootstrap_servers": "b:9092", "topic": "t", "delete_processed": True}, "delete_processed"),
    ({"format": "delta", "path": "p", "schema": "id int"}, "schema"),
    ({"format": "kafka", "bootstrap_servers": "b:9092", "topic": "t", "path": "p"}, "path"),
    ({"format": "json", "path": "p", "max_file_per_trigger": 5}, "max_file_per_trigger"),
])
def test_a_setting_the_format_does_not_have_is_named_with_the_settings_it_has(meta, setting):
    fmt = meta["format"]
    message = refused(**meta)
    assert f"meta.stream.{setting} is not a setting of {fmt} sources; remove it, or fix its name." in message
    assert "Settings: format, " in message
    assert message.endswith("Reader options Spark knows go under meta.stream.options.")


def test_a_file_source_needs_a_path():
    message = refused(format="json")
    assert "meta.stream.path is missing; give the folder (or Delta table path) to read" in message
    assert "relative to the landing folder" in message


def test_rescued_data_column_is_for_json_only():
    message = refused(format="csv", path="p", options={"header": "true"}, rescued_data_column="_rescued")
    assert message.endswith("meta.stream.rescued_data_column works for json sources only (this one is csv); remove it.")


def test_archive_to_is_kept_for_a_file_source():
    source = from_meta(format="json", path="p", archive_to="done")
    assert (source.archive_to, source.delete_processed, source.clean_source) == ("done", False, "archive")


def test_delete_processed_is_an_opt_in_of_file_sources():
    assert from_meta(format="csv", path="p", schema="a int", delete_processed=True).clean_source == "delete"
    assert from_meta(format="json", path="p", delete_processed=False).clean_source is None
    assert from_meta(format="json", path="p").clean_source is None  # files stay by default


def test_delete_processed_must_be_a_boolean():
    message = refused(format="json", path="p", delete_processed="yes")
    assert "meta.stream.delete_processed is 'yes'; give true (delete each file once the batch" in message


def test_archive_to_and_delete_processed_together_are_refused():
    message = refused(format="json", path="p", archive_to="done", delete_processed=True)
    assert message == (
        f"Source {NAME}: meta.stream.archive_to and meta.stream.delete_processed are both set; a "
        "processed file is either moved or deleted. Keep archive_to to move processed files to "
        "that folder, or delete_processed: true to delete them, not both."
    )


@pytest.mark.parametrize("option", ["cleanSource", "sourceArchiveDir"])
def test_spark_clean_source_options_go_through_the_settings(option):
    message = refused(format="json", path="p", options={option: "delete"})
    assert f"meta.stream.options.{option} is Spark's clean-up of processed files" in message
    assert "meta.stream.delete_processed: true (cleanSource delete)" in message


def test_one_rate_limit_at_a_time():
    message = refused(format="json", path="p", max_files_per_trigger=1, max_bytes_per_trigger=1024)
    assert "give max_files_per_trigger or max_bytes_per_trigger, not both" in message
    assert "one limit per micro-batch" in message


@pytest.mark.parametrize("setting, value", [
    ("max_files_per_trigger", 0),
    ("max_files_per_trigger", -5),
    ("max_files_per_trigger", "ten"),
    ("max_bytes_per_trigger", "1g"),
    ("max_bytes_per_trigger", 1.5),
])
def test_a_rate_limit_is_a_positive_whole_number(setting, value):
    message = refused(format="json", path="p", **{setting: value})
    assert message.endswith(f"meta.stream.{setting} is {value!r}; give a positive whole number.")


def test_headerless_csv_cannot_evolve_its_schema():
    message = refused(format="csv", path="p", schema="a int", schema_evolution="add_new_columns")
    assert "csv files without a header have no column names to evolve by" in message
    assert "set options.header: true, or leave schema_evolution out." in message


def test_headerless_csv_without_a_schema_needs_one():
    message = refused(format="csv", path="p")
    assert "csv files without a header need meta.stream.schema" in message
    assert "options.header: true to infer the schema from the header" in message


def test_an_unknown_schema_evolution_lists_the_policies():
    message = refused(format="json", path="p", schema_evolution="evolve")
    assert message.endswith(
        "meta.stream.schema_evolution is 'evolve'; use one of add_new_columns, rescue, fail_on_new_columns, none."
    )


def test_add_new_columns_needs_an_inferred_schema():
    message = refused(format="json", path="p", schema="id int", schema_evolution="add_new_columns")
    assert "add_new_columns evolves an inferred schema; this source declares meta.stream.schema" in message
    assert "Add new columns to the declared schema, or remove it" in message


def test_rescue_needs_a_rescued_data_column():
    message = refused(format="json", path="p", schema="id int", schema_evolution="rescue")
    assert "schema_evolution rescue keeps new fields in the rescued-data column" in message
    assert "set meta.stream.rescued_data_column (json sources), e.g. _rescued_data." in message


def test_a_kafka_mistake_is_a_source_config_error_with_kafkas_message():
    message = refused(format="kafka", topic="recordings")
    assert "meta.stream.bootstrap_servers is missing; give the brokers as host:port" in message


def test_a_kafka_source_passes_extra_connector_options_through():
    source = from_meta(
        format="kafka", bootstrap_servers="localhost:9092", topic="recordings",
        options={"kafka.security.protocol": "SASL_SSL", "failOnDataLoss": False},
    )
    assert (source.format, source.path) == ("kafka", "")
    assert source.options == {
        "kafka.bootstrap.servers": "localhost:9092", "subscribe": "recordings", "startingOffsets": "earliest",
        "kafka.security.protocol": "SASL_SSL", "failOnDataLoss": "false",
    }


@pytest.fixture
def lakehouse(tmp_path) -> Lakehouse:
    return Lakehouse.from_env({"LAKEHOUSE_DIR": str(tmp_path)})


def test_a_missing_landing_folder_names_source_path_and_fixes(monkeypatch, lakehouse):
    monkeypatch.setattr(hadoop_fs, "exists", lambda spark, path: False)
    with pytest.raises(StreamSourceConfigError) as error:
        landing_folder(None, from_meta(format="json", path="recordings"), lakehouse)
    assert str(error.value) == (
        f"Source {NAME}: its folder {lakehouse.landing}/recordings (meta.stream.path: recordings) does "
        "not exist. Create the folder, correct meta.stream.path, or set meta.stream.create_path: true "
        "to have it created empty (a stream with no data yet)."
    )


def test_create_path_creates_a_missing_landing_folder(monkeypatch, lakehouse):
    created = []
    monkeypatch.setattr(hadoop_fs, "exists", lambda spark, path: False)
    monkeypatch.setattr(hadoop_fs, "mkdirs", lambda spark, path: created.append(path))
    source = from_meta(format="json", path="recordings", create_path=True)
    assert landing_folder(None, source, lakehouse) == f"{lakehouse.landing}/recordings"
    assert created == [f"{lakehouse.landing}/recordings"]


class FakeSpark:
    """Only what file_source_schema touches before the schema store: spark.read.format().options()."""

    class read:
        @staticmethod
        def format(fmt):
            return FakeReader()


class FakeReader:
    def options(self, **options):
        return self


def test_a_source_with_no_schema_and_no_files_yet_says_to_land_or_declare(monkeypatch, lakehouse):
    monkeypatch.setattr(hadoop_fs, "list_data_files", lambda spark, path: [])
    monkeypatch.setattr(hadoop_fs, "list_names", lambda spark, path: [])
    path = f"{lakehouse.landing}/recordings"
    with pytest.raises(StreamSourceConfigError, match=re.escape(
        f"Source {NAME}: no schema is declared and no files have landed in {path} to infer one from. "
        "Land a file first, or declare meta.stream.schema."
    )):
        file_source_schema(FakeSpark(), from_meta(format="json", path="recordings"), lakehouse, path)


def test_a_view_is_found_by_its_name_only_whole_and_in_any_case():
    views = SourceViews()
    source = from_meta(format="json", path="p")
    view = views.declare(source)
    assert view == source_view_name(NAME) == "stream_source__landing__recordings"
    batch = views.declare(source, streaming=False)
    assert batch == "batch_source__landing__recordings"
    sql = f"select * from {view.upper()} join {batch} using (id) join {view}_old using (id)"
    assert views.named_in(sql) == [view, batch]
    assert views.named_in("") == []
