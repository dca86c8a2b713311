"""Lines a model cannot read never become rows of nulls unseen, and "rows in" adds up.

A model that reads a json or csv source without selecting its `_corrupt_record` column gets only
the lines that could be read; the others go, raw text and file, to `<model>__corrupt_lines`, and
the run line counts them. "rows in" counts every line read, also those the model's WHERE rejects
(the session turns the readers' filter pushdown off: adapter/dbt_spark_streaming/session.py).
"""

from __future__ import annotations

import json

import pytest

from dbt_results import failure_messages, node_results, rows_processed
from dbt_spark_streaming.run.streaming_run import StreamingRun
from dbt_spark_streaming.run.serving import ServedQuery, _supervise
from python_runners.testing.landing import land_json_lines, land_text, landing_folder
from streaming_projects import write_streaming_project

pytestmark = pytest.mark.slow  # a matrix of formats and ways to read them: make test runs it, test-fast does not

SCHEMA = "corrupt_lines"

SOURCES = """
version: 2
sources:
  - name: lines
    tables:
      - name: readings
        meta:
          stream:
            format: json
            path: corrupt_lines_json
            schema: "id int, kind string, v int, ts string"
      - name: readings_csv
        meta:
          stream:
            format: csv
            path: corrupt_lines_csv
            schema: "id int, kind string, v int"
            options: {header: true}
      - name: counted
        meta:
          stream:
            format: json
            path: corrupt_lines_counted
            schema: "id int, kind string, v int, ts string"
      - name: rescued
        meta:
          stream:
            format: json
            path: corrupt_lines_rescued
            schema: "id int, kind string, v int"
            rescued_data_column: _rescued_data
      - name: served
        meta:
          stream:
            format: json
            path: corrupt_lines_served
            schema: "id int, kind string, v int"
      - name: archived
        meta:
          stream:
            format: csv
            path: corrupt_lines_archived
            schema: "id int, kind string"
            options: {header: true}
            archive_to: corrupt_lines_archive/csv
      - name: union_json
        meta:
          stream:
            format: json
            path: corrupt_lines_union_json
            schema: "id int, v int"
      - name: union_csv
        meta:
          stream:
            format: csv
            path: corrupt_lines_union_csv
            schema: "id int, v int"
            options: {header: true}
      - name: bronze_shape
        meta:
          stream:
            format: csv
            path: corrupt_lines_bronze_shape
            schema: "id int, kind string, v int"
            options: {header: true}
      - name: files_only
        meta:
          stream:
            format: json
            path: corrupt_lines_files_only
            schema: "id int"
"""

MODELS = {
    "readings": "select id, kind, v, ts from {{ source('lines', 'readings') }}",
    "readings_csv": "select id, kind, v from {{ source('lines', 'readings_csv') }}",
    # the same lines read by models that name some of the columns: one leaves the corrupt-record
    # column out, one keeps it
    "readings_csv_named": "select id, kind from {{ source('lines', 'readings_csv') }}",
    "readings_csv_kept": "select id, kind, _corrupt_record from {{ source('lines', 'readings_csv') }}",
    "kept_readings": (
        "select id, kind, v, ts from {{ source('lines', 'counted') }}\n"
        "where kind is not null and v < 500"
    ),
    "rescued_readings": "select id, kind, v, _rescued_data from {{ source('lines', 'rescued') }}",
    "served_readings": "select id, kind, v from {{ source('lines', 'served') }}",
    "archived_readings": "select id, kind from {{ source('lines', 'archived') }}",
    "both_sources": (
        "select id, v from {{ source('lines', 'union_json') }}\n"
        "union all\n"
        "select id, v from {{ source('lines', 'union_csv') }}"
    ),
    # the demo's shape: bronze keeps every line, silver filters the unreadable ones out
    "shape_bronze": "select * except (_metadata) from {{ source('lines', 'bronze_shape') }}",
    "shape_silver": "select id, kind, v from stream({{ ref('shape_bronze') }}) where _corrupt_record is null",
    # reads no column of the source: no nulls to keep out, and every line is one of its rows
    "landed_files": "select _metadata.file_name as file_name from {{ source('lines', 'files_only') }}",
}


@pytest.fixture(scope="module")
def project(tmp_path_factory, spark):
    root = tmp_path_factory.mktemp("corrupt_lines_project")
    return str(write_streaming_project(root, "corrupt_lines", SCHEMA, MODELS, SOURCES))


def run(dbt, project, *args: str):
    result = dbt("run", *args, project_dir=project)
    assert result.success, failure_messages(result)
    return result


def message(result, model: str) -> str:
    return node_results(result)[model].message


def rows(spark, table: str, columns: str, order: str) -> list[tuple]:
    return [tuple(row) for row in spark.sql(f"select {columns} from {SCHEMA}.{table} order by {order}").collect()]


def good(first: int, count: int) -> list[dict]:
    return [{"id": i, "kind": "k", "v": i * 10, "ts": f"2026-11-25T10:{i:02d}:00"} for i in range(first, first + count)]


BAD_JSON = "{bad json"
MISTYPED = '{"id": 7, "kind": "x", "v": "abc", "ts": "2026-11-25T10:07:00"}'


def test_unreadable_json_lines_are_quarantined_not_written_as_nulls(dbt, project, spark, lakehouse, capfd):
    folder = landing_folder(lakehouse, "corrupt_lines_json")
    lines = [json.dumps(row) for row in good(1, 5)] + [BAD_JSON, MISTYPED]
    land_text(folder, "a.json", "\n".join(lines) + "\n")

    capfd.readouterr()
    result = run(dbt, project, "--select", "readings")
    out = capfd.readouterr().out

    said = ("STREAMED 7 rows in, 5 written, 2 unreadable lines quarantined to "
            f"{SCHEMA}.readings__corrupt_lines, 1 batch (caught up)")
    assert message(result, "readings") == said
    assert said in out  # dbt's own line
    assert rows(spark, "readings", "id, kind, v", "id") == [(i, "k", i * 10) for i in range(1, 6)]
    assert rows(spark, "readings", "count(*)", "1") == [(5,)]  # no row of nulls, no id 7 with null v
    quarantined = rows(spark, "readings__corrupt_lines",
                       "_source, _corrupt_record, _source_file, _fields_read", "_corrupt_record")
    assert [(source, raw, path.rsplit("/", 1)[-1]) for source, raw, path, _ in quarantined] == [
        ("lines.readings", MISTYPED, "a.json"), ("lines.readings", BAD_JSON, "a.json"),
    ]
    assert quarantined[0][3] == '{"id":7,"kind":"x","ts":"2026-11-25T10:07:00"}'  # what could be read
    times = rows(spark, "readings__corrupt_lines", "count(_file_modification_time), count(_quarantined_at)", "1")
    assert times == [(2, 2)]

    # the next run: only what landed since, each unreadable line quarantined once
    land_text(folder, "b.json", json.dumps(good(6, 1)[0]) + "\n{\"id\": 9, \"v\": [1]}\n")
    result = run(dbt, project, "--select", "readings")
    assert message(result, "readings") == (
        "STREAMED 2 rows in, 1 written, 1 unreadable line quarantined to "
        f"{SCHEMA}.readings__corrupt_lines, 1 batch (caught up)"
    )
    result = run(dbt, project, "--select", "readings")
    assert message(result, "readings").startswith("UP TO DATE, 0 rows in")  # nor a lines query started
    assert rows(spark, "readings", "count(*)", "1") == [(6,)]
    per_file = spark.sql(f"select element_at(split(_source_file, '/'), -1), count(*) "
                         f"from {SCHEMA}.readings__corrupt_lines group by 1 order by 1").collect()
    assert [tuple(row) for row in per_file] == [("a.json", 2), ("b.json", 1)]

    # a full refresh rebuilds the quarantine with the table: every line once again, not twice
    result = run(dbt, project, "--select", "readings", "--full-refresh")
    assert message(result, "readings") == (
        "STREAMED 9 rows in, 6 written, 3 unreadable lines quarantined to "
        f"{SCHEMA}.readings__corrupt_lines, 1 batch (caught up)"
    )
    assert rows(spark, "readings__corrupt_lines", "count(*)", "1") == [(3,)]


def test_an_unreadable_csv_value_is_quarantined_with_its_line(dbt, project, spark, lakehouse):
    """A text value in a numeric column, a line with a field too few and one with a field too
    many: none is a row of the table, whichever columns the model reads."""
    folder = landing_folder(lakehouse, "corrupt_lines_csv")
    land_text(folder, "a.csv", "id,kind,v\n1,a,10\n2,b,xyz\n3,c,30\n4,d\n5,e,50,extra\n")

    result = run(dbt, project, "--select", "readings_csv", "readings_csv_named", "readings_csv_kept")

    assert message(result, "readings_csv") == (
        "STREAMED 5 rows in, 2 written, 3 unreadable lines quarantined to "
        f"{SCHEMA}.readings_csv__corrupt_lines, 1 batch (caught up)"
    )
    assert rows(spark, "readings_csv", "id, kind, v", "id") == [(1, "a", 10), (3, "c", 30)]
    quarantined = rows(spark, "readings_csv__corrupt_lines",
                       "_source, _corrupt_record, _source_file", "_corrupt_record")
    assert [(source, raw, path.rsplit("/", 1)[-1]) for source, raw, path in quarantined] == [
        ("lines.readings_csv", "2,b,xyz", "a.csv"), ("lines.readings_csv", "4,d", "a.csv"),
        ("lines.readings_csv", "5,e,50,extra", "a.csv"),
    ]
    # A line whose fields do not match the schema's is unreadable whichever columns are read;
    # "xyz" only to a model that reads v (Spark converts only the columns a query reads).
    assert message(result, "readings_csv_named") == (
        "STREAMED 5 rows in, 3 written, 2 unreadable lines quarantined to "
        f"{SCHEMA}.readings_csv_named__corrupt_lines, 1 batch (caught up)"
    )
    assert rows(spark, "readings_csv_named", "id, kind", "id") == [(1, "a"), (2, "b"), (3, "c")]
    kept = rows(spark, "readings_csv_kept", "id, _corrupt_record", "id")
    assert [raw for _, raw in kept] == [None, None, None, "4,d", "5,e,50,extra"]


def test_unreadable_lines_are_counted_by_the_model_that_keeps_them_and_the_one_that_filters_them(
    dbt, project, spark, lakehouse
):
    """The README's shape: bronze selects every column, `_corrupt_record` too; silver filters
    `where _corrupt_record is null`. Each run line says how many unreadable lines it read and
    whether its table keeps them, and the progress table records them per batch."""
    from dbt_spark_streaming.progress import table as progress_table

    land_text(landing_folder(lakehouse, "corrupt_lines_bronze_shape"), "a.csv",
              "id,kind,v\n1,a,10\n2,b,abc\n3,c,30\n4,d,40,extra\n")

    result = run(dbt, project, "--select", "shape_bronze", "shape_silver")

    assert message(result, "shape_bronze") == (
        "STREAMED 4 rows in, 4 written, 2 unreadable lines kept (_corrupt_record set), 1 batch (caught up)")
    assert message(result, "shape_silver") == (
        "STREAMED 4 rows in, 2 written, 2 unreadable lines in its input (_corrupt_record set) not "
        "carried into its table, 1 batch (caught up)")
    assert rows(spark, "shape_silver", "id, kind, v", "id") == [(1, "a", 10), (3, "c", 30)]
    recorded = spark.sql(
        f"select model, unreadable_lines from {progress_table.table_name()} "
        "where model in ('shape_bronze', 'shape_silver') and not up_to_date").collect()
    assert sorted(tuple(row) for row in recorded) == [("shape_bronze", 2), ("shape_silver", 2)]


def test_json_read_with_rescued_fields_quarantines_its_unreadable_lines_too(dbt, project, spark, lakehouse):
    lines = ['{"id": 1, "kind": "a", "v": 1, "extra": 2}', BAD_JSON, '{"id": 3, "kind": "c", "v": "abc"}']
    land_text(landing_folder(lakehouse, "corrupt_lines_rescued"), "a.json", "\n".join(lines) + "\n")

    result = run(dbt, project, "--select", "rescued_readings")

    assert message(result, "rescued_readings") == (
        "STREAMED 3 rows in, 1 written, 2 unreadable lines quarantined to "
        f"{SCHEMA}.rescued_readings__corrupt_lines, 1 batch (caught up)"
    )
    assert rows(spark, "rescued_readings", "id, kind, v, _rescued_data", "id") == [(1, "a", 1, '{"extra":2}')]
    assert rows(spark, "rescued_readings__corrupt_lines", "_corrupt_record", "1") == [
        (lines[2],), (BAD_JSON,),
    ]


def test_rows_in_counts_the_lines_the_models_filter_rejects(dbt, project, spark, lakehouse):
    # 31 lines: 25 kept, 3 without a kind and 3 with v of 500 or more rejected by the model's WHERE
    lines = good(1, 25)
    lines += [{"id": 100 + i, "kind": None, "v": 1, "ts": "t"} for i in range(3)]
    lines += [{"id": 200 + i, "kind": "k", "v": 500 + i, "ts": "t"} for i in range(3)]
    land_json_lines(landing_folder(lakehouse, "corrupt_lines_counted"), "a.json", lines)

    result = run(dbt, project, "--select", "kept_readings")

    assert message(result, "kept_readings") == "STREAMED 31 rows in, 25 written, 1 batch (caught up)"
    assert rows_processed(result) == {"kept_readings": 31}
    assert rows(spark, "kept_readings", "count(*)", "1") == [(25,)]

    # 10 more: 7 kept, 1 rejected by the filter, 2 unreadable: 10 = 7 + 1 + 2
    more = [json.dumps(row) for row in good(30, 7)] + ['{"id": 40, "kind": "k", "v": 900, "ts": "t"}']
    land_text(landing_folder(lakehouse, "corrupt_lines_counted"), "b.json",
              "\n".join([*more, BAD_JSON, MISTYPED]) + "\n")
    result = run(dbt, project, "--select", "kept_readings")
    assert message(result, "kept_readings") == (
        "STREAMED 10 rows in, 7 written, 2 unreadable lines quarantined to "
        f"{SCHEMA}.kept_readings__corrupt_lines, 1 batch (caught up)"
    )


def test_a_model_that_reads_no_column_of_the_source_gets_every_line(dbt, project, spark, lakehouse):
    land_text(landing_folder(lakehouse, "corrupt_lines_files_only"), "a.json", '{"id": 1}\n{bad json\n')

    result = run(dbt, project, "--select", "landed_files")

    assert message(result, "landed_files") == "STREAMED 2 rows in, 2 written, 1 batch (caught up)"
    assert not spark.catalog.tableExists(f"{SCHEMA}.landed_files__corrupt_lines")


def test_a_model_reading_two_sources_quarantines_both_into_one_table_once(dbt, project, spark, lakehouse):
    json_folder = landing_folder(lakehouse, "corrupt_lines_union_json")
    csv_folder = landing_folder(lakehouse, "corrupt_lines_union_csv")
    land_text(json_folder, "a.json", '{"id": 1, "v": 1}\n{"id": 2, "v": "two"}\n')
    land_text(csv_folder, "a.csv", "id,v\n3,3\n4,four\n")

    result = run(dbt, project, "--select", "both_sources")
    assert message(result, "both_sources") == (
        "STREAMED 4 rows in, 2 written, 2 unreadable lines quarantined to "
        f"{SCHEMA}.both_sources__corrupt_lines, 1 batch (caught up)"
    )

    land_text(csv_folder, "b.csv", "id,v\n5,five\n")
    result = run(dbt, project, "--select", "both_sources")

    assert message(result, "both_sources") == (
        "STREAMED 1 rows in, 0 written, 1 unreadable line quarantined to "
        f"{SCHEMA}.both_sources__corrupt_lines, 1 batch (caught up)"
    )
    assert rows(spark, "both_sources", "id, v", "id") == [(1, 1), (3, 3)]
    assert rows(spark, "both_sources__corrupt_lines", "_source, _corrupt_record", "2") == [
        ("lines.union_csv", "4,four"), ("lines.union_csv", "5,five"),
        ("lines.union_json", '{"id": 2, "v": "two"}'),
    ]


def test_with_archive_to_unreadable_lines_are_quarantined_from_the_archived_file(dbt, project, spark, lakehouse):
    folder = landing_folder(lakehouse, "corrupt_lines_archived")
    land_text(folder, "one.csv", "id,kind\n1,a\nx,b\n")

    result = run(dbt, project, "--select", "archived_readings")
    # the model's stream moves one.csv to the archive when its next batch starts; the
    # quarantine reads the archived files, so it has not seen it yet
    assert message(result, "archived_readings") == "STREAMED 2 rows in, 1 written, 1 batch (caught up)"

    land_text(folder, "two.csv", "id,kind\n3,c\n")
    result = run(dbt, project, "--select", "archived_readings")

    assert message(result, "archived_readings") == (
        "STREAMED 1 rows in, 1 written, 1 unreadable line quarantined to "
        f"{SCHEMA}.archived_readings__corrupt_lines, 1 batch (caught up)"
    )
    assert rows(spark, "archived_readings", "id, kind", "id") == [(1, "a"), (3, "c")]
    quarantined = rows(spark, "archived_readings__corrupt_lines", "_corrupt_record, _source_file", "1")
    assert [(raw, path.rsplit("/", 1)[-1]) for raw, path in quarantined] == [("x,b", "one.csv")]
    assert not (folder / "one.csv").exists()


def test_a_served_model_serves_the_quarantine_of_its_unreadable_lines_too(dbt, project, spark, lakehouse):
    folder = landing_folder(lakehouse, "corrupt_lines_served")
    land_text(folder, "a.json", '{"id": 1, "kind": "a", "v": 1}\n')
    model, quarantine = f"{SCHEMA}.served_readings", f"{SCHEMA}.served_readings__corrupt_lines:lines.served"
    try:
        result = run(dbt, project, "--select", "served_readings",
                     "--vars", "{stream_trigger: {processing_time: '1 second'}}")
        assert message(result, "served_readings") == "STREAMED 1 rows in, 1 written, 1 batch (caught up, serving)"
        queries = {query.name: query for query in spark.streams.active}
        assert set(queries) == {model, quarantine}

        land_text(folder, "b.json", '{"id": 2, "kind": "b", "v": 2}\n{bad json\n')
        for query in queries.values():
            query.processAllAvailable()
        assert rows(spark, "served_readings", "id", "id") == [(1,), (2,)]
        assert rows(spark, "served_readings__corrupt_lines", "_corrupt_record", "1") == [(BAD_JSON,)]

        # stopped, the serving loop starts it again from its checkpoint, as it does a model's query
        served = ServedQuery(quarantine, queries[quarantine])
        served.query.stop()
        _supervise(spark, StreamingRun.current(), served, log=lambda _: None)
        served.restart_at = 0
        _supervise(spark, StreamingRun.current(), served, log=lambda _: None)
        assert served.restarts == 1 and served.query.isActive
        land_text(folder, "c.json", '{"id": 3, "kind": "c", "v": "abc"}\n')
        for query in (served.query, queries[model]):
            query.processAllAvailable()
        assert rows(spark, "served_readings", "id", "id") == [(1,), (2,)]
        assert rows(spark, "served_readings__corrupt_lines", "_corrupt_record", "1") == [
            ('{"id": 3, "kind": "c", "v": "abc"}',), (BAD_JSON,),
        ]
    finally:
        for query in spark.streams.active:
            query.stop()
