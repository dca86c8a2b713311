"""A file source's schema policies (adapter/dbt_spark_streaming/sources/schemas.py), with a schema
store and reader stand-ins: which policy applies, and what a run says when new columns land."""

from __future__ import annotations

import pytest
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.sources.schemas import (
    POLICIES,
    SchemaVersion,
    SourceSchemaError,
    current_schema,
    default_policy,
)

NAME = "landing.recordings"
PATH = "/lakehouse/landing/recordings"
DECLARED = StructType([StructField("id", IntegerType()), StructField("device", StringType())])


class Store:
    """SchemaStore's interface, in memory."""

    folder = "/checkpoints/_source_schemas/landing.recordings"

    def __init__(self, latest: SchemaVersion | None = None, checked_until: int = -1):
        self._latest, self._checked_until = latest, checked_until
        self.saved: list[tuple[int, StructType, list[str]]] = []

    def latest(self):
        return self._latest

    def checked_until(self):
        return self._checked_until

    def save(self, number, schema, added):
        self.saved.append((number, schema, added))

    def mark_checked(self, modification_time_ms):
        self._checked_until = modification_time_ms


class Reader:
    """A DataFrameReader whose files hold the given columns."""

    def __init__(self, *columns: str):
        self.schema = StructType([StructField(name, StringType()) for name in columns])
        self.loaded: list[list[str]] = []

    def load(self, paths):
        self.loaded.append(list(paths))
        return self


@pytest.fixture
def landed(monkeypatch):
    files: list[hadoop_fs.DataFile] = []
    monkeypatch.setattr(hadoop_fs, "list_data_files", lambda spark, path: list(files))
    return files


def test_the_default_policy_follows_the_schema_and_rescued_column():
    assert default_policy(declared=False, rescued_data_column=None) == "add_new_columns"
    assert default_policy(declared=True, rescued_data_column="_rescued") == "rescue"
    assert default_policy(declared=True, rescued_data_column=None) == "fail_on_new_columns"
    assert set(POLICIES) == {"add_new_columns", "rescue", "fail_on_new_columns", "none"}


@pytest.mark.parametrize("policy", ["rescue", "none"])
def test_a_declared_schema_that_never_evolves_lists_no_files(monkeypatch, policy):
    monkeypatch.setattr(hadoop_fs, "list_data_files", lambda spark, path: pytest.fail("listed the folder"))
    assert current_schema(None, NAME, Reader(), PATH, Store(), DECLARED, policy) is DECLARED


def test_no_schema_and_no_files_says_to_land_a_file_or_declare_one(landed):
    with pytest.raises(SourceSchemaError) as error:
        current_schema(None, NAME, Reader(), PATH, Store(), None, "add_new_columns")
    assert str(error.value) == (
        f"Source {NAME}: no schema is declared and no files have landed in {PATH} to infer one from. "
        "Land a file first, or declare meta.stream.schema."
    )


def test_a_schema_is_inferred_once_from_the_landed_files(landed):
    landed += [hadoop_fs.DataFile(f"{PATH}/a.json", 100, 1), hadoop_fs.DataFile(f"{PATH}/b.json", 200, 1)]
    store, reader = Store(), Reader("id", "device")
    assert current_schema(None, NAME, reader, PATH, store, None, "add_new_columns") == reader.schema
    assert reader.loaded == [[f"{PATH}/a.json", f"{PATH}/b.json"]]
    assert store.saved == [(0, reader.schema, [])]
    assert store.checked_until() == 200


def test_new_columns_under_fail_on_new_columns_are_named_with_the_fixes(landed):
    landed += [hadoop_fs.DataFile(f"{PATH}/old.json", 100, 1), hadoop_fs.DataFile(f"{PATH}/new.json", 300, 1)]
    reader = Reader("ID", "device", "battery", "firmware")
    with pytest.raises(SourceSchemaError) as error:
        current_schema(None, NAME, reader, PATH, Store(checked_until=100), DECLARED, "fail_on_new_columns")
    message = str(error.value)
    assert message.startswith(
        f"Source {NAME}: newly landed files have column(s) battery, firmware that the schema does not name "
        "(schema_evolution: fail_on_new_columns)."
    )
    assert "Add them to meta.stream.schema, or set schema_evolution to rescue" in message
    assert "add_new_columns (with an inferred schema)" in message
    assert reader.loaded == [[f"{PATH}/new.json"]]  # only what landed since the last check


def test_new_columns_are_added_nullable_as_a_new_version_and_said(landed, capsys):
    landed.append(hadoop_fs.DataFile(f"{PATH}/new.json", 300, 1))
    stored = SchemaVersion(2, StructType([StructField("id", IntegerType(), nullable=False)]))
    store = Store(latest=stored, checked_until=100)
    schema = current_schema(None, NAME, Reader("id", "battery"), PATH, store, None, "add_new_columns")
    assert schema == StructType([StructField("id", IntegerType(), False), StructField("battery", StringType())])
    assert store.saved == [(3, schema, ["battery"])]
    assert store.checked_until() == 300
    assert capsys.readouterr().out == (
        f"Source {NAME}: new column(s) battery added to its schema (version 3, {store.folder}/3.json).\n"
    )


def test_nothing_new_since_the_last_check_reads_no_file(landed):
    landed.append(hadoop_fs.DataFile(f"{PATH}/old.json", 100, 1))
    reader = Reader("id", "device", "battery")
    store = Store(checked_until=100)
    assert current_schema(None, NAME, reader, PATH, store, DECLARED, "fail_on_new_columns") is DECLARED
    assert reader.loaded == [] and store.saved == []
