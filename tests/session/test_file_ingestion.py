"""File ingestion for bronze: rate limits, a schema inferred once and evolved by policy, archiving
and deleting processed files.

Each source lands in a folder of its own under the test lakehouse's landing folder; each
`dbt run` reads what landed since the last one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dbt_results import failure_messages, node_results, rows_processed
from dbt_spark_streaming.lakehouse import Lakehouse
from python_runners.testing.landing import land_json_lines, land_text, landing_folder
from streaming_projects import write_streaming_project

pytestmark = pytest.mark.slow  # a thousand files, a hundred per batch: make test runs it, test-fast does not

SOURCES = """
version: 2
sources:
  - name: files
    tables:
      - name: many
        meta:
          stream:
            format: json
            path: ingest_many
            schema: "id int, kind string"
            max_files_per_trigger: 100
      - name: evolving
        meta:
          stream:
            format: json
            path: ingest_evolving
      - name: strict
        meta:
          stream:
            format: json
            path: ingest_strict
            schema: "id int, kind string"
      - name: archived
        meta:
          stream:
            format: csv
            path: ingest_archived
            schema: "id int, kind string"
            options: {header: true}
            archive_to: ingest_archive/csv
      - name: deleted
        meta:
          stream:
            format: json
            path: ingest_deleted
            schema: "id int, kind string"
            max_files_per_trigger: 1
            delete_processed: true
      - name: columnar
        meta:
          stream:
            format: parquet
            path: ingest_parquet
"""

MODELS = {
    "many_files": "select id, kind from {{ source('files', 'many') }}",
    "evolving_files": (
        "{{ config(on_schema_change='append_new_columns') }}\n"
        "select * except (_metadata) from {{ source('files', 'evolving') }}"
    ),
    "strict_files": "select id, kind from {{ source('files', 'strict') }}",
    "archived_files": "select id, kind from {{ source('files', 'archived') }}",
    "parquet_files": "select * except (_metadata) from {{ source('files', 'columnar') }}",
    # It keeps the corrupt-record column: a quarantine would be a second reader of a folder the
    # model deletes from, which is refused (test_corrupt_lines.py).
    "deleted_files": "select id, kind, _corrupt_record from {{ source('files', 'deleted') }}",
}


@pytest.fixture(scope="module")
def project(tmp_path_factory, spark):
    root = tmp_path_factory.mktemp("file_ingestion_project")
    return str(write_streaming_project(root, "file_ingestion", "ingested", MODELS, SOURCES))


def run(dbt, project, model: str):
    return dbt("run", "--select", model, project_dir=project)


def message(result, model: str) -> str:
    return node_results(result)[model].message


def table_rows(spark, model: str, columns: str) -> list[tuple]:
    return [tuple(row) for row in spark.sql(f"select {columns} from ingested.{model} order by id").collect()]


def test_a_thousand_files_go_in_a_hundred_per_batch_and_never_twice(dbt, project, spark, lakehouse):
    """Ten batches, so Spark compacts the source's file log at the tenth (its compactInterval) and
    the run after reads which files were seen from the compacted log."""
    folder = landing_folder(lakehouse, "ingest_many")
    for i in range(1_000):
        land_json_lines(folder, f"f{i:05d}.json", [{"id": i, "kind": "small"}])

    result = run(dbt, project, "many_files")

    assert result.success, failure_messages(result)
    assert "STREAMED 1000 rows in, 1000 written, 10 batches" in message(result, "many_files")
    sources = Path(lakehouse.checkpoint_path("ingested/many_files")) / "sources" / "files__many"
    assert (sources / "9.compact").exists()

    for i in range(1_000, 1_003):
        land_json_lines(folder, f"f{i:05d}.json", [{"id": i, "kind": "late"}])
    result = run(dbt, project, "many_files")

    assert result.success, failure_messages(result)
    assert rows_processed(result) == {"many_files": 3}
    ids = spark.table("ingested.many_files").select("id")
    assert ids.count() == ids.distinct().count() == 1_003


def test_a_new_column_is_added_to_an_inferred_schema_and_nothing_is_lost(dbt, project, spark, lakehouse):
    folder = landing_folder(lakehouse, "ingest_evolving")
    land_json_lines(folder, "a.json", [{"id": 1, "kind": "x"}, {"id": 2, "kind": "y"}])
    result = run(dbt, project, "evolving_files")
    assert result.success, failure_messages(result)

    land_json_lines(folder, "b.json", [{"id": 3, "kind": "z", "battery": 87}])
    result = run(dbt, project, "evolving_files")

    assert result.success, failure_messages(result)
    assert rows_processed(result) == {"evolving_files": 1}
    assert table_rows(spark, "evolving_files", "id, kind, battery") == [
        (1, "x", None), (2, "y", None), (3, "z", 87),
    ]
    schemas = Path(Lakehouse.from_env().source_schemas("files.evolving"))  # the default target's
    assert schemas.parent.name == "default"
    versions = {name: json.loads((schemas / name).read_text()) for name in ("0.json", "1.json")}
    assert versions["0.json"]["columns_added"] == []
    assert versions["1.json"]["columns_added"] == ["battery"]

    # Each target keeps its own: CI's run reads the landing with schemas of its own and moves
    # nothing of the default target's, its last check included.
    kept = {path.name: path.read_text() for path in schemas.glob("*.json")}
    land_json_lines(folder, "c.json", [{"id": 4, "kind": "w", "battery": 12, "signal": -70}])
    ci = dbt("run", "--target", "ci", "--select", "evolving_files", project_dir=project)
    assert ci.success, failure_messages(ci)
    ci_schemas = Path(Lakehouse.from_env().source_schemas("files.evolving"))
    assert ci_schemas.parent.name == "ci" and (ci_schemas / "0.json").exists()
    assert {path.name: path.read_text() for path in schemas.glob("*.json")} == kept


def test_a_new_column_in_a_declared_schema_stops_the_run_naming_it(dbt, project, spark, lakehouse):
    folder = landing_folder(lakehouse, "ingest_strict")
    land_json_lines(folder, "a.json", [{"id": 1, "kind": "x"}])
    assert run(dbt, project, "strict_files").success

    land_json_lines(folder, "b.json", [{"id": 2, "kind": "y", "firmware": "2.1"}])
    result = run(dbt, project, "strict_files")

    assert not result.success
    text = failure_messages(result)
    assert "Source files.strict" in text and "firmware" in text
    assert "meta.stream.schema" in text
    assert table_rows(spark, "strict_files", "id, kind") == [(1, "x")]


def landed(folder: Path, pattern: str) -> set[str]:
    return {path.name for path in folder.rglob(pattern)}


def test_processed_files_are_archived_after_their_commit_and_read_once(dbt, project, spark, lakehouse):
    """Spark archives a batch's files once that batch has committed, when the next batch starts:
    the files of a run's last batch stay until the next run that reads something."""
    folder = landing_folder(lakehouse, "ingest_archived")
    archive = Path(lakehouse.landing_path("ingest_archive/csv"))
    land_text(folder, "one.csv", "id,kind\n1,a\n2,b\n")
    land_text(folder, "two.csv", "id,kind\n3,c\n")
    assert run(dbt, project, "archived_files").success
    assert landed(folder, "*.csv") == {"one.csv", "two.csv"}  # read, committed, not yet archived
    assert landed(archive, "*.csv") == set()

    land_text(folder, "three.csv", "id,kind\n4,d\n")
    result = run(dbt, project, "archived_files")

    assert result.success, failure_messages(result)
    assert table_rows(spark, "archived_files", "id, kind") == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    assert landed(archive, "*.csv") == {"one.csv", "two.csv"}
    assert landed(folder, "*.csv") == {"three.csv"}


def test_processed_files_are_deleted_after_their_commit_and_every_row_is_kept_once(dbt, project, spark, lakehouse):
    """delete_processed: one file per batch, so a run of three batches deletes the files of its
    first two (each once the next batch starts, its own batch committed) and leaves its last
    batch's file until the next run reads something."""
    folder = landing_folder(lakehouse, "ingest_deleted")
    for number in range(3):
        land_json_lines(folder, f"f{number}.json", [{"id": number * 10 + line, "kind": f"f{number}"}
                                                    for line in range(2)])
    result = run(dbt, project, "deleted_files")

    assert result.success, failure_messages(result)
    assert "STREAMED 6 rows in, 6 written, 3 batches" in message(result, "deleted_files")
    assert landed(folder, "*.json") == {"f2.json"}

    land_json_lines(folder, "f3.json", [{"id": 30, "kind": "f3"}])
    result = run(dbt, project, "deleted_files")

    assert result.success, failure_messages(result)
    assert rows_processed(result) == {"deleted_files": 1}
    assert landed(folder, "*.json") == {"f3.json"}
    assert table_rows(spark, "deleted_files", "id, kind, _corrupt_record") == [
        (0, "f0", None), (1, "f0", None), (10, "f1", None), (11, "f1", None),
        (20, "f2", None), (21, "f2", None), (30, "f3", None),
    ]


def test_parquet_schema_is_inferred_from_the_files(dbt, project, spark, lakehouse, tmp_path):
    folder = landing_folder(lakehouse, "ingest_parquet")
    written = tmp_path / "parquet"
    spark.createDataFrame([(1, 2.5), (2, 3.5)], "id long, reading double").coalesce(1) \
        .write.parquet(str(written))
    for part in written.glob("part-*.parquet"):
        shutil.copy(part, folder / part.name)

    result = run(dbt, project, "parquet_files")

    assert result.success, failure_messages(result)
    assert table_rows(spark, "parquet_files", "id, reading") == [(1, 2.5), (2, 3.5)]


def test_an_archived_source_with_two_streaming_readers_is_refused(dbt, project):
    second = Path(project) / "models" / "second_reader.sql"
    second.write_text("select id from {{ source('files', 'archived') }}\n")
    try:
        result = run(dbt, project, "second_reader")
    finally:
        second.unlink()

    assert not result.success
    text = failure_messages(result)
    assert "Source files.archived has archive_to set" in text
    assert "archived_files" in text and "second_reader" in text


def test_a_model_whose_unreadable_lines_a_deleting_source_would_lose_is_refused(dbt, project, spark):
    model = Path(project) / "models" / "deleted_without_column.sql"
    model.write_text("select id, kind from {{ source('files', 'deleted') }}\n")
    deleted_files = Path(project) / "models" / "deleted_files.sql"
    kept = deleted_files.read_text()
    deleted_files.unlink()  # one streaming reader of the folder, as delete_processed asks
    try:
        result = run(dbt, project, "deleted_without_column")
    finally:
        model.unlink()
        deleted_files.write_text(kept)

    assert not result.success
    text = failure_messages(result)
    assert "Source files.deleted: meta.stream.delete_processed is set and model deleted_without_column" in text
    assert "does not select its _corrupt_record column" in text and "archive_to" in text
    assert not spark.catalog.tableExists("ingested.deleted_without_column")
