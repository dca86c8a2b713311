"""Mistakes that must not lose data silently: a mistyped source folder, values of the wrong
type in json and csv files, and fields outside the schema (rescued with their JSON types).
"""

from __future__ import annotations

import os

import pytest

from dbt_results import failure_messages, rows_processed
from python_runners.testing.landing import land_json_lines, land_text, landing_folder
from streaming_projects import write_streaming_project

SCHEMA = "bad_input"

SOURCES = """
version: 2
sources:
  - name: bad
    tables:
      - name: readings_csv
        meta:
          stream:
            format: csv
            path: bad_input_csv
            schema: "id int, kind string"
            options: {header: true}
      - name: readings_json
        meta:
          stream:
            format: json
            path: bad_input_json
            schema: "id int, kind string"
            rescued_data_column: _rescued_data
      - name: mistyped
        meta:
          stream:
            format: json
            path: bad_input_mistyped
            schema: "id int"
      - name: created
        meta:
          stream:
            format: json
            path: bad_input_created
            schema: "id int"
            create_path: true
      - name: unsure
        meta:
          stream:
            format: json
            path: bad_input_unsure
            schema: "id int"
            create_path: "yes"
"""

MODELS = {
    "csv_readings": (
        "select id, kind, _corrupt_record, _metadata.file_name as source_file\n"
        "from {{ source('bad', 'readings_csv') }}"
    ),
    # as the demo's quarantine models: the lines bronze could not read, with their file
    "csv_quarantine": (
        "select source_file, _corrupt_record as raw_record from stream({{ ref('csv_readings') }})\n"
        "where _corrupt_record is not null"
    ),
    "csv_good": "select id, kind from stream({{ ref('csv_readings') }}) where id is not null",
    "json_readings": (
        "select id, kind, _corrupt_record, _rescued_data from {{ source('bad', 'readings_json') }}"
    ),
    "mistyped_reader": "select id from {{ source('bad', 'mistyped') }}",
    "mistyped_copy": (
        "{{ config(materialized='copy_into') }}\nselect id from {{ source('bad', 'mistyped') }}"
    ),
    "created_reader": "select id from {{ source('bad', 'created') }}",
    "unsure_reader": "select id from {{ source('bad', 'unsure') }}",
}


@pytest.fixture(scope="module")
def project(tmp_path_factory, spark):
    root = tmp_path_factory.mktemp("bad_input_project")
    return str(write_streaming_project(root, "bad_input", SCHEMA, MODELS, SOURCES))


def rows(spark, model: str, columns: str, order: str = "id") -> list[tuple]:
    query = f"select {columns} from {SCHEMA}.{model} order by {order}"
    return [tuple(row) for row in spark.sql(query).collect()]


def missing_folder_message(lakehouse) -> str:
    return (
        f"Source bad.mistyped: its folder {lakehouse.landing_path('bad_input_mistyped')} "
        "(meta.stream.path: bad_input_mistyped) does not exist. Create the folder, correct "
        "meta.stream.path, or set meta.stream.create_path: true to have it created empty (a "
        "stream with no data yet)."
    )


def test_a_csv_value_of_the_wrong_type_keeps_its_line_for_the_quarantine(dbt, project, spark, lakehouse):
    land_text(landing_folder(lakehouse, "bad_input_csv"), "a.csv", "id,kind\n1,x\n2,y\nabc,z\n3,w\n")

    result = dbt("run", "--select", "csv_readings+", project_dir=project)

    assert result.success, failure_messages(result)
    assert rows_processed(result) == {"csv_readings": 4, "csv_quarantine": 4, "csv_good": 4}
    assert rows(spark, "csv_readings", "id, kind, _corrupt_record", order="kind") == [
        (3, "w", None), (1, "x", None), (2, "y", None), (None, "z", "abc,z"),
    ]
    assert rows(spark, "csv_quarantine", "source_file, raw_record", order="raw_record") == [
        ("a.csv", "abc,z"),
    ]
    assert rows(spark, "csv_good", "id, kind") == [(1, "x"), (2, "y"), (3, "w")]


def test_json_keeps_bad_lines_and_rescues_new_fields_with_their_types(dbt, project, spark, lakehouse):
    lines = [
        {"id": 1, "kind": "plain"},
        {"id": 2, "kind": "rescued", "extra": 97, "flag": True, "none": None, "ratio": 0.5,
         "nested": {"a": [1, "x", False]}, "list": [1, {"b": 2}], "text": "t"},
        {"id": "abc", "kind": "mistyped"},
    ]
    land_json_lines(landing_folder(lakehouse, "bad_input_json"), "a.json", lines)

    result = dbt("run", "--select", "json_readings", project_dir=project)

    assert result.success, failure_messages(result)
    assert rows_processed(result) == {"json_readings": 3}
    assert rows(spark, "json_readings", "id, kind, _corrupt_record, _rescued_data", order="kind") == [
        (None, "mistyped", '{"id": "abc", "kind": "mistyped"}', None),
        (1, "plain", None, None),
        (2, "rescued", None,
         '{"extra":97,"flag":true,"none":null,"ratio":0.5,"nested":{"a":[1,"x",false]},'
         '"list":[1,{"b":2}],"text":"t"}'),
    ]


def test_a_missing_source_folder_fails_naming_source_path_and_fix(dbt, project, spark, lakehouse):
    result = dbt("run", "--select", "mistyped_reader", project_dir=project)

    assert not result.success
    assert missing_folder_message(lakehouse) in failure_messages(result)
    assert not os.path.exists(lakehouse.landing_path("bad_input_mistyped"))
    assert not spark.catalog.tableExists(f"{SCHEMA}.mistyped_reader")


def test_copy_into_over_a_missing_folder_fails_the_same_way(dbt, project, spark, lakehouse):
    result = dbt("run", "--select", "mistyped_copy", project_dir=project)

    assert not result.success
    assert f"Model mistyped_copy: {missing_folder_message(lakehouse)}" in failure_messages(result)
    assert not os.path.exists(lakehouse.landing_path("bad_input_mistyped"))
    assert not os.path.exists(lakehouse.checkpoint_path(f"{SCHEMA}/mistyped_copy"))  # no load log


def test_create_path_true_creates_the_folder_and_reads_nothing(dbt, project, spark, lakehouse):
    assert not os.path.exists(lakehouse.landing_path("bad_input_created"))

    result = dbt("run", "--select", "created_reader", project_dir=project)

    assert result.success, failure_messages(result)
    assert rows_processed(result) == {"created_reader": 0}
    assert os.path.isdir(lakehouse.landing_path("bad_input_created"))
    assert spark.table(f"{SCHEMA}.created_reader").count() == 0


def test_create_path_must_be_true_or_false(dbt, project, lakehouse):
    result = dbt("run", "--select", "unsure_reader", project_dir=project)

    assert not result.success
    assert (
        "Source bad.unsure: meta.stream.create_path is 'yes'; give true (create the folder when "
        "it does not exist) or false (the default: a missing folder is an error)."
    ) in failure_messages(result)
    assert not os.path.exists(lakehouse.landing_path("bad_input_unsure"))
