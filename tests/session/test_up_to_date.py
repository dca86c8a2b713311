"""A model with nothing new starts no query; one that needs a batch without new data still runs it.

lifecycle/up_to_date.py decides from the checkpoint's logs and the inputs' positions, before a
query starts. Each test here would fail if that decision said "nothing new" when Spark still had
a batch to run: new files, a new Delta version, a watermark that closes a window, the empty batch
after an initial snapshot, a redeploy, a served query.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from pyspark.sql.streaming import StreamingQueryListener

from dbt_results import failure_messages, node_results, rows_processed
from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.progress import table as progress_table
from python_runners.testing.landing import land_json_lines, landing_folder
from streaming_projects import write_streaming_project

SCHEMA = "up_to_date"
SOURCES = """
version: 2
sources:
  - name: files
    tables:
      - name: events
        meta:
          stream:
            format: json
            path: up_to_date_events
            schema: "id int, kind string, at timestamp"
"""
PIPELINE = {
    "bronze_events": "select id, kind, at from {{ source('files', 'events') }}",
    "silver_events": "select id, upper(kind) as kind, at from stream({{ ref('bronze_events') }})",
    "gold_kinds": (
        "{{ config(output_mode='complete') }}\n"
        "select kind, count(*) as events from stream({{ ref('silver_events') }}) group by kind"
    ),
}


class QueryStarts(StreamingQueryListener):
    """The names of the queries started while it listens."""

    def __init__(self):
        self.names: list[str] = []
        self._heard = threading.Condition()

    def onQueryStarted(self, event):
        with self._heard:
            self.names.append(event.name or "")
            self._heard.notify_all()

    def onQueryProgress(self, event):
        pass

    def onQueryIdle(self, event):
        pass

    def onQueryTerminated(self, event):
        pass

    def until_heard(self, name: str, timeout: float = 30) -> list[str]:
        """Every start heard up to the start of `name` (events arrive in order, asynchronously)."""
        deadline = time.monotonic() + timeout
        with self._heard:
            while name not in self.names and time.monotonic() < deadline:
                self._heard.wait(0.1)
        return [started for started in self.names if started != name]


def starts_during(spark, tmp_path, action) -> list[str]:
    """The queries started while `action` ran: heard up to a marker query started after it."""
    listener = QueryStarts()
    spark.streams.addListener(listener)
    try:
        result = action()
        marker = f"marker_{time.monotonic_ns()}"
        spark.sql("create table if not exists up_to_date_in.marker (id bigint) using delta")
        (spark.readStream.name("input").table("up_to_date_in.marker").writeStream.queryName(marker)
         .format("noop").option("checkpointLocation", str(tmp_path / marker))
         .trigger(availableNow=True).start().awaitTermination())
        return result, listener.until_heard(marker)
    finally:
        spark.streams.removeListener(listener)


@pytest.fixture(scope="module", autouse=True)
def input_schema(spark):
    spark.sql("create schema if not exists up_to_date_in")


def land(lakehouse, name: str, rows: list[tuple]) -> None:
    folder = landing_folder(lakehouse, "up_to_date_events")
    land_json_lines(folder, name, [{"id": i, "kind": kind, "at": at} for i, kind, at in rows])


def messages(result) -> dict[str, str]:
    return {name: r.message for name, r in node_results(result).items() if r.node.resource_type == "model"}


def test_a_run_with_nothing_new_starts_no_query_and_new_input_still_streams(dbt, spark, lakehouse, tmp_path):
    project = str(write_streaming_project(tmp_path / "project", "up_to_date_pipeline", SCHEMA, PIPELINE, SOURCES,
                                          serve_after_run=True))  # its on-run-end writes the progress table
    land(lakehouse, "1.json", [(1, "a", "2026-01-01T00:00:00"), (2, "b", "2026-01-01T00:01:00")])
    first = dbt("run", project_dir=project)
    assert first.success, failure_messages(first)
    # gold's stream read silver's initial snapshot: the empty batch planned after it waits for
    # new input (test_the_empty_batch_after_an_initial_snapshot_waits_for_new_input)
    settled = dbt("run", project_dir=project)
    assert [name for name, said in messages(settled).items() if not said.startswith("UP TO DATE")] == []
    # Another trigger, nothing new: no model runs (none commits its trigger, which would wake
    # the models downstream of it).
    switched = dbt("run", "--vars", "{stream_trigger: once}", project_dir=project)
    assert [name for name, said in messages(switched).items() if not said.startswith("UP TO DATE")] == []

    for model in PIPELINE:  # made again only if a model's SQL is resolved
        spark.catalog.dropTempView(f"{model}__stream_src")
    idle, started = starts_during(spark, tmp_path, lambda: dbt("run", project_dir=project))
    assert idle.success, failure_messages(idle)
    assert started == []
    # told from their remembered inputs (lifecycle/query_inputs.py): no SQL resolved, but for
    # bronze's, whose unreadable lines have a query of their own (its checkpoint is checked too)
    assert [model for model in PIPELINE if spark.catalog.tableExists(f"{model}__stream_src")] == ["bronze_events"]
    said = messages(idle)
    assert all(message.startswith("UP TO DATE, 0 rows in") for message in said.values()), said
    codes = {name: r.adapter_response["code"] for name, r in node_results(idle).items()
             if r.node.resource_type == "model"}
    assert set(codes.values()) == {"UP TO DATE"}
    recorded = spark.sql(
        f"select model, batch_id, num_input_rows from {progress_table.table_name()} "
        f"where up_to_date and model in ('bronze_events', 'silver_events', 'gold_kinds')"
    ).collect()
    assert {row.model for row in recorded} == set(PIPELINE) and all(row.num_input_rows == 0 for row in recorded)
    # Said once per batch: a model still up to date since the same batch adds no row (no commit).
    assert len(recorded) == len({(row.model, row.batch_id) for row in recorded})
    assert dbt("run", project_dir=project).success
    assert spark.sql(f"select count(*) from {progress_table.table_name()} where up_to_date "
                     "and model in ('bronze_events', 'silver_events', 'gold_kinds')").first()[0] == len(recorded)

    # One new file: every model downstream of it streams it, none twice.
    land(lakehouse, "2.json", [(3, "a", "2026-01-01T00:02:00")])
    again = dbt("run", project_dir=project)
    assert again.success, failure_messages(again)
    assert rows_processed(again) == {"bronze_events": 1, "silver_events": 1, "gold_kinds": 1}
    kinds = {row.kind: row.events for row in spark.table(f"{SCHEMA}.gold_kinds").collect()}
    assert kinds == {"A": 2, "B": 1}


def test_a_watermark_that_closes_a_window_runs_a_batch_without_new_data(dbt, spark, lakehouse, tmp_path):
    """With trigger once a run is one batch: the window its events closed is emitted by the
    batch without data that the next run must start."""
    spark.sql("create or replace table up_to_date_in.readings (device string, at timestamp) using delta")
    project = str(write_streaming_project(tmp_path / "project", "up_to_date_windows", SCHEMA, {
        "windows": (
            "{{ config(trigger={'once': true}, watermark={'column': 'at', 'delay': '1 minute'}) }}\n"
            "select window.start as window_start, device, count(*) as readings\n"
            "from stream(up_to_date_in.readings)\n"
            "group by window(at, '5 minutes'), device"
        ),
    }))
    spark.sql("insert into up_to_date_in.readings values "
              "('a', timestamp'2026-01-01 00:00:00'), ('a', timestamp'2026-01-01 00:20:00')")
    first = dbt("run", project_dir=project)
    assert first.success, failure_messages(first)
    assert spark.table(f"{SCHEMA}.windows").count() == 0  # the batch ran with the watermark before it

    second = dbt("run", project_dir=project)
    assert second.success, failure_messages(second)
    assert not messages(second)["windows"].startswith("UP TO DATE")
    assert [tuple(row) for row in spark.table(f"{SCHEMA}.windows").select("device", "readings").collect()] == [("a", 1)]


def test_the_empty_batch_after_an_initial_snapshot_waits_for_new_input(dbt, spark, lakehouse, tmp_path):
    """A stateful stream's first run reads its input's initial snapshot; the empty batch planned
    after it (sources/initial_snapshot.py) is not committed yet. It reads nothing, so a run with
    nothing new leaves it planned and starts no query (a complete-mode table is not rewritten
    unchanged); the run that has new rows runs it first, then streams them once."""
    spark.sql("create or replace table up_to_date_in.orders (id int, kind string) using delta")
    spark.sql("insert into up_to_date_in.orders values (1, 'a'), (2, 'b'), (3, 'a')")
    project = str(write_streaming_project(tmp_path / "project", "up_to_date_snapshot", SCHEMA, {
        "order_kinds": ("{{ config(output_mode='complete') }}\n"
                        "select kind, count(*) as orders from stream(up_to_date_in.orders) group by kind"),
    }))
    checkpoint = lakehouse.checkpoint_path(f"{SCHEMA}/order_kinds")
    first = dbt("run", project_dir=project)
    assert first.success, failure_messages(first)
    planned, committed = batch_ids(spark, checkpoint, "offsets"), batch_ids(spark, checkpoint, "commits")
    assert planned[-1] == committed[-1] + 1  # the empty batch, planned and not run

    table_version = spark.sql(f"describe history {SCHEMA}.order_kinds").first().version

    second = dbt("run", project_dir=project)
    assert second.success, failure_messages(second)
    assert messages(second)["order_kinds"].startswith("UP TO DATE")
    assert batch_ids(spark, checkpoint, "commits")[-1] == committed[-1]
    assert spark.sql(f"describe history {SCHEMA}.order_kinds").first().version == table_version

    spark.sql("insert into up_to_date_in.orders values (4, 'b')")
    third = dbt("run", project_dir=project)
    assert third.success, failure_messages(third)
    assert rows_processed(third) == {"order_kinds": 1}
    assert batch_ids(spark, checkpoint, "commits")[-1] > planned[-1]  # the empty batch, then the new rows
    assert {tuple(row) for row in spark.table(f"{SCHEMA}.order_kinds").collect()} == {("a", 2), ("b", 2)}
    assert messages(dbt("run", project_dir=project))["order_kinds"].startswith("UP TO DATE")


def test_a_processing_time_trigger_still_serves_when_nothing_is_new(dbt, spark, lakehouse, tmp_path):
    spark.sql("create or replace table up_to_date_in.visits (id int) using delta")
    spark.sql("insert into up_to_date_in.visits values (1), (2)")
    project = str(write_streaming_project(tmp_path / "project", "up_to_date_served", SCHEMA, {
        "visits": "select id from stream(up_to_date_in.visits)",
    }))
    first = dbt("run", project_dir=project)
    assert first.success, failure_messages(first)
    trigger = json.dumps({"stream_trigger": {"processing_time": "1 seconds"}})
    served = dbt("run", "--vars", trigger, project_dir=project)
    try:
        assert served.success, failure_messages(served)
        assert messages(served)["visits"].startswith("UP TO DATE") and "serving" in messages(served)["visits"]
        query = next(q for q in spark.streams.active if q.name == f"{SCHEMA}.visits")
        spark.sql("insert into up_to_date_in.visits values (3)")
        query.processAllAvailable()
        assert spark.table(f"{SCHEMA}.visits").count() == 3
    finally:
        for query in spark.streams.active:
            query.stop()


def test_a_redeploy_with_nothing_new_still_rebuilds(dbt, spark, lakehouse, tmp_path):
    spark.sql("create or replace table up_to_date_in.people (id int, name string) using delta")
    spark.sql("insert into up_to_date_in.people values (1, 'ann'), (2, 'bo')")
    model = "{{ config(on_query_change='redeploy') }}\nselect id, %s as name from stream(up_to_date_in.people)"
    project = write_streaming_project(tmp_path / "project", "up_to_date_redeploy", SCHEMA,
                                      {"people": model % "name"})
    first = dbt("run", project_dir=str(project))
    assert first.success, failure_messages(first)
    (Path(project) / "models" / "people.sql").write_text(model % "upper(name)" + "\n")
    second = dbt("run", project_dir=str(project))
    assert second.success, failure_messages(second)
    assert "redeployed" in messages(second)["people"]
    assert sorted(tuple(row) for row in spark.table(f"{SCHEMA}.people").collect()) == [(1, "ANN"), (2, "BO")]


def test_a_table_made_again_elsewhere_under_the_same_name_is_not_taken_as_up_to_date(dbt, spark, tmp_path):
    """The remembered inputs hold paths; the catalog is asked where each streamed table is now."""
    first, second = tmp_path / "first", tmp_path / "second"
    spark.sql(f"create or replace table up_to_date_in.moved (id int) using delta location '{first}'")
    spark.sql("insert into up_to_date_in.moved values (1)")
    project = str(write_streaming_project(tmp_path / "project", "up_to_date_moved", SCHEMA, {
        "moved_ids": "select id from stream(up_to_date_in.moved)",
    }))
    assert dbt("run", project_dir=project).success
    assert messages(dbt("run", project_dir=project))["moved_ids"].startswith("UP TO DATE")

    spark.sql("drop table up_to_date_in.moved")  # external: its files stay where they were
    spark.sql(f"create table up_to_date_in.moved (id int) using delta location '{second}'")
    spark.sql("insert into up_to_date_in.moved values (2)")
    moved = dbt("run", project_dir=project)
    said = messages(moved).get("moved_ids", "") if moved.result is not None else ""
    assert not said.startswith("UP TO DATE"), said


def batch_ids(spark, checkpoint: str, log: str) -> list[int]:
    return sorted(int(name) for name in hadoop_fs.list_names(spark, f"{checkpoint}/{log}") if name.isdigit())
