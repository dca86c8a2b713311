"""A streaming model's query changed since its table was last written: under `fail` the run
stops before anything starts, saying what changed; under `apply_to_new_rows` (the default) it
goes on, says so in the run output and records it in the table's history."""

from __future__ import annotations

from pathlib import Path

from dbt_results import failure_messages, node_results
from streaming_projects import write_streaming_project

SCHEMA = "query_changes"
INPUT = "query_changes_in.events"
BEFORE = f"select id, kind from stream({INPUT})"
AFTER = f"select id, kind from stream({INPUT})\nwhere kind <> 'b'"


# An expectation the apply_to_new_rows run adds (warn: it keeps every row).
RULE = "[{'name': 'id_positive', 'expression': 'id > 0', 'action': 'warn'}]"


def model(sql: str, policy: str, expectations: str = "[]") -> str:
    return f"{{{{ config(on_query_change='{policy}', expectations={expectations}) }}}}\n{sql}"


def ids(spark) -> list[int]:
    return sorted(row.id for row in spark.table(f"{SCHEMA}.changing").collect())


def test_a_changed_query_stops_under_fail_and_is_applied_to_new_rows_and_recorded_otherwise(
    dbt, spark, tmp_path, lakehouse
):
    project = write_streaming_project(tmp_path / "project", "query_changes", SCHEMA,
                                      {"changing": model(BEFORE, "fail")})
    model_file = Path(project) / "models" / "changing.sql"
    checkpoint = Path(lakehouse.checkpoint_path(f"{SCHEMA}/changing"))
    spark.sql("create schema if not exists query_changes_in")
    spark.sql(f"create or replace table {INPUT} (id int, kind string) using delta")
    spark.sql(f"insert into {INPUT} values (1, 'a'), (2, 'b')")
    assert dbt("run", project_dir=str(project)).success

    model_file.write_text(model(AFTER, "fail"))
    spark.sql(f"insert into {INPUT} values (3, 'a'), (4, 'b')")
    version = spark.sql(f"describe history {SCHEMA}.changing").first().version
    commits = sorted(p.name for p in (checkpoint / "commits").iterdir())
    refused = dbt("run", project_dir=str(project))

    assert not refused.success
    message = failure_messages(refused)
    assert "Model changing: its query changed since the table was last written" in message
    assert "+ where kind <> 'b'" in message
    assert "on_query_change='apply_to_new_rows'" in message and "on_query_change='redeploy'" in message
    assert spark.sql(f"describe history {SCHEMA}.changing").first().version == version
    assert sorted(p.name for p in (checkpoint / "commits").iterdir()) == commits

    model_file.write_text(model(AFTER, "apply_to_new_rows", RULE))
    applied = dbt("run", project_dir=str(project))

    assert applied.success, failure_messages(applied)
    said = node_results(applied)["changing"].message
    # each change in short: the rule added by name, the SQL's changed line; no JSON list
    assert ("; query changed since the last run (expectations: + id_positive (id > 0, warn) | "
            "SQL: + where kind <> 'b'): applied to new rows only") in said, said
    assert "[{" not in said and len(said) < 300, said
    assert ids(spark) == [1, 2, 3]  # the old rows keep the old logic; new ones get the new
    last = spark.sql(f"describe history {SCHEMA}.changing").first()
    assert last.operation == "SET TBLPROPERTIES"
    assert "query changed, applied to new rows only" in last.userMetadata
    assert last.userMetadata.endswith(
        "\n  expectations: + id_positive (id > 0, warn)\n  SQL (- before, + now):\n  + where kind <> 'b'"
    ), last.userMetadata

    # Reformatting is no change; the next run says nothing of it.
    model_file.write_text(model(AFTER.replace("\n", "\n   "), "fail", RULE))
    again = dbt("run", project_dir=str(project))
    assert again.success, failure_messages(again)
    assert "query changed" not in node_results(again)["changing"].message
