"""A changed query its checkpoint cannot take is refused on the run that makes the change, whether
or not there is new input: its state (a column added to a complete-mode aggregate) and its
inputs (one that now reads another folder: test_source_evolution.py) are checked before anything
starts, and nothing is written nor is the checkpoint moved (lifecycle/query_fit.py)."""

from __future__ import annotations

from pathlib import Path

from dbt_results import failure_messages, node_results
from python_runners.testing.landing import land_json_lines, landing_folder
from streaming_projects import write_streaming_project

SCHEMA = "query_fit"
COMPLETE = "{{ config(output_mode='complete') }}\n"
COUNTS = COMPLETE + "select kind, count(*) as n from stream({{ source('fit', 'events') }}) group by kind"
COUNTS_WITH_MAX = COMPLETE + (
    "select kind, count(*) as n, max(id) as max_id from stream({{ source('fit', 'events') }}) group by kind")
COUNTS_OF_POSITIVE = COMPLETE + (
    "select kind, count(*) as n from stream({{ source('fit', 'events') }}) where id > 0 group by kind")
SOURCES_OF = """
version: 2
sources:
  - name: fit
    tables:
      - name: events
        meta: {{stream: {{format: json, path: {events}, schema: "id int, kind string"}}}}
      - name: others
        meta: {{stream: {{format: json, path: {others}, schema: "id int, kind string"}}}}
"""


def sources(events: str, others: str) -> str:
    return SOURCES_OF.format(events=events, others=others)


def written(spark, model: str) -> tuple[int, list[str], list[str]]:
    """The table's version and its checkpoint's offsets and commits: all a refused run must leave."""
    version = spark.sql(f"describe history {SCHEMA}.{model}").first().version
    return version, *(sorted(path.name for path in (checkpoint_of(model) / log).iterdir())
                      for log in ("offsets", "commits"))


def checkpoint_of(model: str) -> Path:
    from dbt_spark_streaming.lakehouse import Lakehouse
    return Path(Lakehouse.from_env().checkpoint_path(f"{SCHEMA}/{model}"))


def test_a_column_added_to_a_complete_aggregate_is_refused_with_nothing_new_and_after_a_landing(
    dbt, spark, tmp_path, lakehouse
):
    events = landing_folder(lakehouse, "query_fit_events")
    land_json_lines(events, "1.json", [{"id": 1, "kind": "a"}, {"id": 2, "kind": "b"}, {"id": 3, "kind": "a"}])
    project = write_streaming_project(tmp_path / "project", "query_fit", SCHEMA, {"counts": COUNTS},
                                      sources("query_fit_events", "query_fit_unread"), serve_after_run=True)
    model_file = project / "models" / "counts.sql"
    assert dbt("run", project_dir=str(project)).success

    # A change the state can take (a filter before the aggregate) still runs, and says so.
    model_file.write_text(COUNTS_OF_POSITIVE)
    applied = dbt("run", project_dir=str(project))
    assert applied.success, failure_messages(applied)
    assert "applied to new rows only" in node_results(applied)["counts"].message

    model_file.write_text(COUNTS_WITH_MAX)
    before = written(spark, "counts")
    refused = dbt("run", project_dir=str(project))  # nothing new landed

    assert not refused.success
    message = failure_messages(refused)
    assert "Model counts: its query changed since the last run" in message, message
    assert "cannot take the change: Spark refused it: [STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE]" in message, message
    assert "max_id" in message and "dbt run --full-refresh --select counts+" in message, message
    assert "on_query_change='redeploy'" in message, message
    assert written(spark, "counts") == before
    assert not Path(f"{checkpoint_of('counts')}.query_trial").exists()  # the trial's copy is gone

    # Served (the on-run-end hook serves a processing-time model): refused before serving.
    model_file.write_text(COUNTS_WITH_MAX.replace("complete'", "complete', trigger='1 second'"))
    served = dbt("run", project_dir=str(project))
    assert not served.success and "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE" in failure_messages(served)
    assert [query.name for query in spark.streams.active] == []
    assert written(spark, "counts") == before

    model_file.write_text(COUNTS_WITH_MAX)
    land_json_lines(events, "2.json", [{"id": 4, "kind": "b"}])
    again = dbt("run", project_dir=str(project))
    assert not again.success and "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE" in failure_messages(again)
    assert written(spark, "counts") == before

    rebuilt = dbt("run", "--full-refresh", "--select", "counts+", project_dir=str(project))
    assert rebuilt.success, failure_messages(rebuilt)
    rows = {row.kind: (row.n, row.max_id) for row in spark.table(f"{SCHEMA}.counts").collect()}
    assert rows == {"a": (2, 3), "b": (2, 4)}
