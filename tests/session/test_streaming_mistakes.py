"""Mistakes a person makes with a streaming model, and what they get instead of silent loss:
a LIMIT, `--empty`, a full refresh without the readers, `dbt show`, an unbuilt upstream."""

from __future__ import annotations

import shutil

import pytest

from dbt_results import failure_messages, node_results, rows_processed
from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.errors import cannot_run
from streaming_projects import write_streaming_project

SCHEMA = "mistakes"
INPUT = "mistakes_in.events"

MODELS = {
    "limited_events": f"select id, kind from stream({INPUT}) limit 3",
    "offset_events": f"select id, kind from stream({INPUT}) offset 2",
    "limited_subquery": (
        f"select id from (select id, kind from stream({INPUT}) limit 3) as first_three where id > 1"
    ),
    "ranked_events": (
        f"select id, row_number() over (partition by kind order by id) as n from stream({INPUT})"
    ),
    "distinct_kinds": (
        "{{ config(output_mode='complete') }}\n"
        f"select count(distinct kind) as kinds from stream({INPUT})"
    ),
    "top_kind": (
        "{{ config(output_mode='complete') }}\n"
        f"select kind, count(*) as n from stream({INPUT}) group by kind order by n desc limit 1"
    ),
    "copied": f"select id, kind from stream({INPUT})",
    "copied_reader": "select id from stream({{ ref('copied') }})",
    "followed": f"select id, kind from stream({INPUT})",
    "follower": "select id from {{ stream_appends(ref('followed')) }}",
    "empty_events": f"select id, kind from stream({INPUT})",
    "empty_reader": "select id, kind from stream({{ ref('empty_events') }}) where kind = 'a'",
    "never_built": f"select id from stream({INPUT})",
    "batch_only": f"select id, kind from {INPUT}",
    "unbuilt_reader": "select id from stream({{ ref('never_built') }})",
}


@pytest.fixture(scope="module")
def project(tmp_path_factory, spark):
    root = tmp_path_factory.mktemp("mistakes_project")
    write_streaming_project(root, "mistakes", SCHEMA, MODELS)
    spark.sql("create schema if not exists mistakes_in")
    spark.sql(f"create or replace table {INPUT} (id int, kind string) using delta")
    spark.sql(f"insert into {INPUT} values (1,'a'),(2,'b'),(3,'a'),(4,'c'),(5,'a'),(6,'b')")
    return str(root)


def run(dbt, project, *args):
    return dbt("run", *args, project_dir=project)


def exists(spark, model: str) -> bool:
    return spark.catalog.tableExists(f"{SCHEMA}.{model}")


def ids(spark, model: str) -> list[int]:
    return sorted(row.id for row in spark.table(f"{SCHEMA}.{model}").collect())


def checkpoint(lakehouse, model: str) -> str:
    return lakehouse.checkpoint_path(f"{SCHEMA}/{model}")


def add_events(spark, *rows: tuple[int, str]) -> None:
    values = ", ".join(f"({id_}, '{kind}')" for id_, kind in rows)
    spark.sql(f"insert into {INPUT} values {values}")


@pytest.mark.parametrize("model, operation", [
    ("limited_events", "LIMIT"),
    ("limited_subquery", "LIMIT"),
    ("offset_events", "OFFSET"),
    ("ranked_events", "a window function (OVER ...)"),
    ("distinct_kinds", "a DISTINCT aggregation"),
])
def test_what_lint_flags_is_refused_at_run_time_before_anything_is_written(
    dbt, project, spark, lakehouse, model, operation
):
    result = run(dbt, project, "--select", model)

    assert not result.success
    assert cannot_run(model, operation) in failure_messages(result)
    assert not exists(spark, model)
    assert not hadoop_fs.exists(spark, checkpoint(lakehouse, model))


def test_a_streaming_table_that_reads_no_stream_says_how_to_read_one(dbt, project, spark):
    result = run(dbt, project, "--select", "batch_only")

    assert not result.success
    assert (
        "Model batch_only is a streaming_table but reads no stream. Read at least one input as a "
        "stream: stream({{ ref('<model>') }}) or a source declared with meta.stream; for a model "
        "recomputed from batch reads each run, use materialized='table'."
    ) in failure_messages(result)
    assert not exists(spark, "batch_only")


def test_limit_over_a_complete_mode_aggregate_is_a_top_n_and_runs(dbt, project, spark):
    result = run(dbt, project, "--select", "top_kind")

    assert result.success, failure_messages(result)
    assert [tuple(row) for row in spark.table(f"{SCHEMA}.top_kind").collect()] == [("a", 3)]


def test_empty_checks_the_queries_and_moves_no_checkpoint(dbt, project, spark, lakehouse):
    models = ("--select", "empty_events", "empty_reader")
    result = run(dbt, project, "--empty", *models)

    assert result.success, failure_messages(result)
    for name, node in node_results(result).items():
        assert node.message == "EMPTY run: query checked, no stream started, table created with no rows"
        assert spark.table(f"{SCHEMA}.{name}").count() == 0
        assert not hadoop_fs.exists(spark, checkpoint(lakehouse, name))

    result = run(dbt, project, *models)  # the real run after it processes every row once
    assert result.success, failure_messages(result)
    assert rows_processed(result) == {"empty_events": 6, "empty_reader": 6}
    assert ids(spark, "empty_events") == [1, 2, 3, 4, 5, 6]
    assert ids(spark, "empty_reader") == [1, 3, 5]

    offsets = hadoop_fs.list_names(spark, checkpoint(lakehouse, "empty_events") + "/offsets")
    add_events(spark, (7, "a"))
    result = run(dbt, project, "--empty", *models)
    assert result.success, failure_messages(result)
    assert {node.message for node in node_results(result).values()} == {
        "EMPTY run: query checked, no stream started, table and checkpoint untouched"
    }
    assert hadoop_fs.list_names(spark, checkpoint(lakehouse, "empty_events") + "/offsets") == offsets
    assert ids(spark, "empty_reader") == [1, 3, 5]

    result = run(dbt, project, *models)  # the row the --empty run saw is not lost
    assert rows_processed(result) == {"empty_events": 1, "empty_reader": 1}
    assert ids(spark, "empty_reader") == [1, 3, 5, 7]


@pytest.mark.slow  # rebuilds tables and their readers over several runs: not in test-fast
def test_the_printed_fix_for_a_lost_checkpoint_rebuilds_the_readers_too(dbt, project, spark, lakehouse):
    both = ("--select", "copied", "copied_reader")
    assert run(dbt, project, *both).success
    shutil.rmtree(checkpoint(lakehouse, "copied"))

    result = run(dbt, project, *both)
    message = failure_messages(result)
    assert not result.success
    fix = "dbt run --full-refresh --select copied+"
    assert f"`{fix}`" in message

    result = run(dbt, project, *fix.split()[2:])  # exactly as printed
    assert result.success, failure_messages(result)
    assert set(node_results(result)) == {"copied", "copied_reader"}
    rows = spark.table(INPUT).count()
    assert ids(spark, "copied") == ids(spark, "copied_reader") == sorted(
        row.id for row in spark.table(INPUT).collect()
    )
    assert len(ids(spark, "copied_reader")) == rows  # nothing twice


@pytest.mark.slow  # rebuilds tables and their readers over several runs: not in test-fast
def test_a_full_refresh_leaving_a_reader_behind_is_refused_and_a_rebuilt_upstream_gets_the_fix(
    dbt, project, spark, lakehouse
):
    assert run(dbt, project, "--select", "copied", "copied_reader").success
    version = spark.sql(f"describe history {SCHEMA}.copied").first().version

    refused = run(dbt, project, "--full-refresh", "--select", "copied")  # its reader forgotten
    assert not refused.success
    message = failure_messages(refused)
    assert "Model copied: --full-refresh would drop and rebuild its table" in message
    assert "would not be rebuilt in this run: copied_reader" in message
    assert "`dbt run --full-refresh --select copied+`" in message
    assert spark.sql(f"describe history {SCHEMA}.copied").first().version == version  # nothing dropped
    assert hadoop_fs.exists(spark, checkpoint(lakehouse, "copied") + "/offsets")

    # Rebuilt behind dbt's back (dropped, its checkpoint deleted): the reader gets the fix.
    spark.sql(f"drop table {SCHEMA}.copied")
    shutil.rmtree(checkpoint(lakehouse, "copied"))
    add_events(spark, (8, "c"))
    assert run(dbt, project, "--select", "copied").success

    result = run(dbt, project, "--select", "copied_reader")

    assert not result.success
    message = failure_messages(result)
    assert (
        "Model copied_reader streams from a table that was rebuilt (a full refresh, or dropped and "
        "created again) after this model's checkpoint last read it" in message
    )
    assert "`dbt run --full-refresh --select copied_reader+`" in message
    assert "DIFFERENT_DELTA_TABLE" not in message and "\tat " not in message

    result = run(dbt, project, "--full-refresh", "--select", "copied_reader+")
    assert result.success, failure_messages(result)
    assert ids(spark, "copied_reader") == ids(spark, "copied")


@pytest.mark.slow  # rebuilds tables and their readers over several runs: not in test-fast
def test_a_full_refresh_empties_the_table_in_place_for_a_reader_that_follows_rewrites(dbt, project, spark):
    """stream_appends (skipChangeCommits): the reader is not rebuilt and goes on over the same
    Delta table, skipping the emptying commit and reading the rebuilt rows as new rows."""
    both = ("--select", "followed", "follower")
    assert run(dbt, project, *both).success
    before = ids(spark, "follower")

    result = run(dbt, project, "--full-refresh", "--select", "followed")
    assert result.success, failure_messages(result)
    operations = [row.operation for row in spark.sql(f"describe history {SCHEMA}.followed").collect()]
    assert "DELETE" in operations and "CREATE TABLE" in operations  # the same table, emptied
    add_events(spark, (9, "b"))
    result = run(dbt, project, *both)

    assert result.success, failure_messages(result)
    assert ids(spark, "followed") == sorted(row.id for row in spark.table(INPUT).collect())
    assert ids(spark, "follower") == sorted(before + ids(spark, "followed"))


def test_dbt_show_of_a_streaming_model_shows_its_table(dbt, project, spark):
    assert run(dbt, project, "--select", "copied").success

    result = dbt("show", "--select", "copied", "--limit", "3", project_dir=project)

    assert result.success, failure_messages(result)
    shown = node_results(result)["copied"].agate_table
    assert len(shown.rows) == 3
    table_rows = {tuple(row) for row in spark.table(f"{SCHEMA}.copied").collect()}
    assert {tuple(row) for row in shown.rows} <= table_rows


def test_dbt_show_of_a_model_never_built_says_to_build_it(dbt, project):
    result = dbt("show", "--select", "never_built", project_dir=project)

    assert not result.success
    assert (
        "Model never_built is a streaming_table and has no table yet: `dbt show` shows the rows "
        "of its table. Build it first with `dbt run --select +never_built`."
    ) in failure_messages(result)


def test_an_unbuilt_upstream_says_what_to_build_first(dbt, project, spark, capfd):
    capfd.readouterr()
    result = run(dbt, project, "--select", "unbuilt_reader")
    terminal = "".join(capfd.readouterr())

    assert not result.success
    message = failure_messages(result)
    assert (
        "Model unbuilt_reader reads `mistakes`.`never_built`, which does not exist yet. Build "
        "what it reads first: `dbt run --select +unbuilt_reader` runs the model and everything "
        "upstream of it. If `mistakes`.`never_built` is not a model or a seed, check its name."
    ) in message
    assert "DROP VIEW" not in message and "+- " not in message
    assert "org.apache.spark" not in terminal and "DROP VIEW" not in terminal  # kept in logs/
    assert not exists(spark, "unbuilt_reader")

    result = run(dbt, project, "--select", "+unbuilt_reader")
    assert result.success, failure_messages(result)
    assert len(ids(spark, "unbuilt_reader")) == spark.table(INPUT).count()
