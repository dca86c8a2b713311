"""cdc_table: a change feed landed in three parts (out of order, repeated, deleted) applied as SCD1
and SCD2 by `dbt run`, equal after each part to the tables worked out in Python from the whole
feed so far; a model downstream streams the SCD1 table's changes, each once.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from python_runners.testing.cdc_reference import scd1, scd2
from python_runners.testing.landing import land_json_lines
from dbt_results import failure_messages, rows_processed
from streaming_projects import write_streaming_project

pytestmark = pytest.mark.slow  # scd1 and scd2 against the feed worked out in Python, landing after landing: make test runs it, test-fast does not

SCHEMA = "cdc"
KEYS, SEQUENCE = ["mrn"], ["lsn"]
STORED = ["mrn", "ward", "lsn"]


def change(mrn: int, lsn: int, op: str, ward: str | None = None) -> dict:
    return {"mrn": mrn, "ward": ward, "op": op, "lsn": lsn}


# Three landings. mrn 1: three changes in one batch, then a late one between two of its versions.
# mrn 3 and 5: a late insert older than the key's delete (a tombstone keeps it out of scd1).
# mrn 4: its insert arrives after a newer update. mrn 6: insert, update, delete in one batch.
# Repeats of earlier changes in the same batch and in later ones.
LANDINGS = [
    [
        change(1, 1, "I", "A"), change(1, 2, "U", "B"), change(1, 5, "U", "C"),
        change(2, 3, "I", "A"), change(2, 3, "I", "A"),
        change(3, 4, "I", "A"), change(3, 8, "D"),
        change(4, 10, "U", "C"),
    ],
    [
        change(1, 4, "U", "D"),
        change(3, 6, "I", "B"),
        change(4, 6, "I", "A"),
        change(2, 3, "I", "A"),
        change(5, 7, "D"), change(5, 9, "I", "A"),
    ],
    [
        change(2, 11, "D"),
        change(5, 6, "I", "B"),
        change(1, 12, "U", "A"), change(1, 5, "U", "C"),
        change(6, 13, "I", "A"), change(6, 14, "U", "B"), change(6, 15, "D"),
    ],
]

SOURCES = """
version: 2
sources:
  - name: landing
    tables:
      - name: patient_changes
        meta:
          stream:
            format: json
            path: cdc_patient_changes
            create_path: true
            schema: mrn bigint, ward string, op string, lsn bigint
"""

CDC_CONFIG = """{{{{ config(
    materialized='cdc_table', keys=['mrn'], sequence_by='lsn', stored_as='{stored_as}',
    apply_as_deletes="op = 'D'", except_columns=['op']
) }}}}
select mrn, ward, op, lsn from {{{{ source('landing', 'patient_changes') }}}}"""

MODELS = {
    "patients": CDC_CONFIG.format(stored_as="scd1"),
    "patient_history": CDC_CONFIG.format(stored_as="scd2"),
    "patient_changes_seen": (
        "select mrn, ward, lsn, _change_type, _commit_version\n"
        "from {{ stream_changes(ref('patients')) }}"
    ),
}


def is_delete(row) -> bool:
    return row["op"] == "D"


def rows_of(spark, table: str, columns: list[str]) -> list[tuple]:
    return sorted(tuple(row) for row in spark.table(table).select(*columns).collect())


def as_tuples(rows: list[dict], columns: list[str]) -> list[tuple]:
    return sorted(tuple(row[column] for column in columns) for row in rows)


def replayed(changes_seen: list) -> dict[int, tuple]:
    """The table the change feed describes, applied in commit order."""
    table: dict[int, tuple] = {}
    for row in sorted(changes_seen, key=lambda row: row["_commit_version"]):
        if row["_change_type"] in ("insert", "update_postimage"):
            table[row["mrn"]] = (row["mrn"], row["ward"], row["lsn"])
        elif row["_change_type"] == "delete":
            table.pop(row["mrn"], None)
    return table


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return write_streaming_project(tmp_path_factory.mktemp("cdc"), "cdc_project", SCHEMA, MODELS, SOURCES)


def test_scd1_and_scd2_equal_the_feed_worked_out_in_python_after_each_landing(
    spark, dbt, project, lakehouse
):
    folder = Path(lakehouse.landing_path("cdc_patient_changes"))
    landed: list[dict] = []
    for number, changes in enumerate(LANDINGS):
        land_json_lines(folder, f"changes-{number}.json", changes)
        landed += changes

        result = dbt("run", project_dir=str(project))
        assert result.success, failure_messages(result)
        processed = rows_processed(result)
        assert (processed["patients"], processed["patient_history"]) == (len(changes), len(changes))

        expected_scd1 = scd1(landed, KEYS, SEQUENCE, is_delete, STORED)
        assert rows_of(spark, f"{SCHEMA}.patients", STORED) == as_tuples(expected_scd1, STORED), number
        history = [*STORED, "__start_at", "__end_at"]
        expected_scd2 = scd2(landed, KEYS, SEQUENCE, is_delete, STORED)
        assert rows_of(spark, f"{SCHEMA}.patient_history", history) == as_tuples(expected_scd2, history), number

        seen = spark.table(f"{SCHEMA}.patient_changes_seen").collect()
        assert replayed(seen) == {row[0]: row for row in rows_of(spark, f"{SCHEMA}.patients", STORED)}
        once = Counter((row["_commit_version"], row["mrn"], row["_change_type"]) for row in seen)
        assert max(once.values()) == 1

    # The late change sits between two versions, and its neighbours' validity was fixed.
    mrn_1 = rows_of(spark, f"{SCHEMA}.patient_history", ["ward", "__start_at", "__end_at"])
    assert ("D", 4, 5) in mrn_1 and ("B", 2, 4) in mrn_1
    # A late insert older than the key's delete did not bring the row back.
    assert 3 not in {row[0] for row in rows_of(spark, f"{SCHEMA}.patients", ["mrn"])}


def test_a_plain_stream_of_a_cdc_table_is_refused_naming_both_reads(dbt, project, tmp_path):
    reader = write_streaming_project(
        tmp_path / "reader", "cdc_reader", SCHEMA,
        {**MODELS, "plain_reader": "select * from stream({{ ref('patients') }})"}, SOURCES,
    )
    result = dbt("compile", "--select", "plain_reader", project_dir=str(reader))

    assert not result.success
    message = failure_messages(result)
    assert "plain_reader" in message and "stream_changes" in message and "stream_appends" in message


@pytest.mark.parametrize("setting, value", [
    ("track_history_columns", "['room']"),
    ("apply_as_deletes", "\"operation = 'D'\""),
])
def test_a_setting_naming_what_the_query_lacks_fails_before_anything_runs(
    spark, dbt, tmp_path, setting, value
):
    model = (
        "{{ config(materialized='cdc_table', keys='mrn', sequence_by='lsn', stored_as='scd2', "
        f"{setting}={value}) }}}}\nselect mrn, ward, op, lsn from {{{{ source('landing', 'patient_changes') }}}}"
    )
    project = write_streaming_project(tmp_path / "bad", "cdc_bad", SCHEMA, {"bad_history": model}, SOURCES)

    result = dbt("run", project_dir=str(project))

    assert not result.success
    message = failure_messages(result)
    assert "Model bad_history" in message and setting in message
    assert not spark.catalog.tableExists(f"{SCHEMA}.bad_history")


def test_a_stream_of_a_table_whose_rows_changed_fails_naming_both_reads(spark, dbt, tmp_path):
    spark.sql("create schema if not exists cdc_raw")
    spark.sql("drop table if exists cdc_raw.wards")
    spark.sql("create table cdc_raw.wards (mrn bigint, ward string) using delta")
    spark.sql("insert into cdc_raw.wards values (1, 'A')")
    project = write_streaming_project(
        tmp_path / "raw", "cdc_raw_reader", SCHEMA, {"ward_reader": "select * from stream(cdc_raw.wards)"}
    )
    assert dbt("run", project_dir=str(project)).success
    spark.sql("update cdc_raw.wards set ward = 'B' where mrn = 1")

    result = dbt("run", project_dir=str(project))

    assert not result.success
    message = failure_messages(result)
    assert "Model ward_reader" in message and "stream_changes" in message and "stream_appends" in message
