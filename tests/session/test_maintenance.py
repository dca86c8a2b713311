"""`dbt run-operation maintain_tables` (`dbt-spark-streaming maintain`): small files compacted,
removed files vacuumed, except those a stopped downstream model has not read yet and those a
rollback inside its window restores."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dbt_results import failure_messages
from streaming_projects import write_streaming_project

pytestmark = pytest.mark.slow  # several dbt runs and two maintenance passes each

SCHEMA = "maint"
INPUT = "maint_in.events"
SILVER = f"{SCHEMA}.readings"
GOLD = f"{SCHEMA}.kind_counts"
ROLLED_SCHEMA = "maint_rolled"  # a checkpoint of its own: the other test's is under maint/
ROLLED = f"{ROLLED_SCHEMA}.readings"
NO_RETENTION = "file_retention='0 seconds', log_retention='0 seconds'"
# a Delta checkpoint every two commits, so that the log has checkpoints to be cut at
OFTEN_CHECKPOINTED = ", tblproperties={'delta.checkpointInterval': 2}"
GOLD_SQL = ("{{ config(output_mode='complete', " + NO_RETENTION + ") }}\n"
            "select kind, count(*) as readings from stream({{ ref('readings') }}) group by kind")


def silver_sql(select: str = "id, kind", extra: str = "") -> str:
    return f"{{{{ config({NO_RETENTION}{OFTEN_CHECKPOINTED}{extra}) }}}}\nselect {select} from stream({INPUT})"


def log_versions(spark, table: str) -> list[int]:
    """The versions whose commits the table's _delta_log still holds."""
    location = spark.sql(f"describe detail {table}").first().location.removeprefix("file:")
    return sorted(int(path.name.split(".")[0]) for path in Path(location, "_delta_log").glob("*.json")
                  if path.name.split(".")[0].isdigit())


def parquet_files(spark, table: str) -> set[str]:
    location = spark.sql(f"describe detail {table}").first().location.removeprefix("file:")
    return {str(path) for path in Path(location).rglob("*.parquet") if "_delta_log" not in path.parts}


def live_files(spark, table: str) -> int:
    return spark.sql(f"describe detail {table}").first().numFiles


def operations(spark, table: str) -> list[str]:
    return [row.operation for row in spark.sql(f"describe history {table}").collect()]


def gold_matches_a_recompute_over_silver(spark) -> bool:
    streamed = sorted(tuple(row) for row in spark.table(GOLD).collect())
    recomputed = sorted(tuple(row) for row in spark.sql(
        f"select kind, count(*) from {SILVER} group by kind").collect())
    return streamed == recomputed


@pytest.fixture
def input_table(spark):
    spark.sql("create schema if not exists maint_in")
    spark.sql(f"create or replace table {INPUT} (id int, kind string) using delta")
    yield
    spark.sql(f"drop table if exists {INPUT}")


def test_vacuum_keeps_what_a_stopped_reader_has_not_read_and_it_then_catches_up_once(
    dbt, spark, tmp_path, input_table
):
    project = write_streaming_project(tmp_path / "project", "maintained", SCHEMA, {
        "readings": silver_sql(), "kind_counts": GOLD_SQL,
    })
    spark.sql(f"insert into {INPUT} values (1, 'a'), (2, 'b')")
    assert (first := dbt("run", project_dir=str(project))).success, failure_messages(first)
    gold_at = log_versions(spark, SILVER)[-1] + 1  # the first version of silver gold has not read
    # gold stops; silver goes on, a file per run that gold has not read
    for rows in ("(3, 'a')", "(4, 'c')", "(5, 'a')"):
        spark.sql(f"insert into {INPUT} values {rows}")
        ran = dbt("run", "--select", "readings", project_dir=str(project))
        assert ran.success, failure_messages(ran)
    unread = parquet_files(spark, SILVER)
    assert live_files(spark, SILVER) >= 4

    maintained = dbt("run-operation", "maintain_tables", project_dir=str(project))

    assert maintained.success, failure_messages(maintained)
    assert live_files(spark, SILVER) == 1
    assert "OPTIMIZE" in operations(spark, SILVER) and "VACUUM END" in operations(spark, SILVER)
    assert unread <= parquet_files(spark, SILVER), "VACUUM deleted files gold has not read"
    assert log_versions(spark, SILVER)[0] <= gold_at, "the log's trim deleted commits gold has not read"
    progress = os.environ["STREAM_PROGRESS_TABLE"]  # the target's: a file per run; no selection, so compacted too
    assert "OPTIMIZE" in operations(spark, progress) and live_files(spark, progress) == 1
    caught_up = dbt("run", "--select", "kind_counts", project_dir=str(project))
    assert caught_up.success, failure_messages(caught_up)
    assert gold_matches_a_recompute_over_silver(spark)
    assert sum(row.readings for row in spark.table(GOLD).collect()) == 5
    assert live_files(spark, GOLD) == 1, "a complete rewrite is bin-packed (optimizeWrite), not a file per partition"

    # gold has read everything now: the next pass deletes the files compaction replaced
    again = dbt("run-operation", "maintain_tables", "--args", "{select: [readings]}", project_dir=str(project))
    assert again.success, failure_messages(again)
    assert len(parquet_files(spark, SILVER)) == live_files(spark, SILVER) == 1
    assert log_versions(spark, SILVER)[0] > gold_at  # nothing needs the old history now: cut
    assert sorted(row.id for row in spark.table(SILVER).collect()) == [1, 2, 3, 4, 5]


def test_vacuum_keeps_a_rollback_inside_its_window_working(dbt, spark, tmp_path, input_table):
    redeployed = silver_sql(extra=", on_query_change='redeploy'")
    project = write_streaming_project(tmp_path / "project", "maintained", ROLLED_SCHEMA, {"readings": redeployed})
    spark.sql(f"insert into {INPUT} values (1, 'a'), (2, 'b')")
    assert (first := dbt("run", project_dir=str(project))).success, failure_messages(first)
    old_rows = sorted(tuple(row) for row in spark.table(ROLLED).collect())
    (project / "models" / "readings.sql").write_text(
        silver_sql("id, kind, upper(kind) as kind_upper", ", on_query_change='redeploy'"))
    assert (swapped := dbt("run", project_dir=str(project))).success, failure_messages(swapped)

    maintained = dbt("run-operation", "maintain_tables", project_dir=str(project))

    assert maintained.success, failure_messages(maintained)
    assert "VACUUM END" not in operations(spark, ROLLED)
    rolled_back = dbt("run-operation", "rollback_redeploy", "--args", "{select: readings}", project_dir=str(project))
    assert rolled_back.success, failure_messages(rolled_back)
    assert sorted(tuple(row) for row in spark.table(ROLLED).collect()) == old_rows
