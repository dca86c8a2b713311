"""Operating streams: each batch's progress shown while `dbt run` runs and kept in the progress
table; old progress removed after the retention period."""

from __future__ import annotations

import io
import time
from datetime import datetime, timedelta, timezone

import pytest

from dbt_results import failure_messages
from dbt_spark_streaming.progress import table as progress_table
from dbt_spark_streaming.progress.live import LiveProgress
from dbt_spark_streaming.progress.recorder import ProgressRecorder
from dbt_spark_streaming.serve import upkeep
from dbt_spark_streaming.serve.progress_keeper import ProgressKeeper
from python_runners.testing.landing import land_json_lines, landing_folder
from streaming_projects import write_streaming_project

SOURCES = """
version: 2
sources:
  - name: files
    tables:
      - name: readings
        meta:
          stream:
            format: json
            path: progress_readings
            schema: "id int"
            max_files_per_trigger: 1
"""

ROWS_PER_FILE = [2, 3, 4]


@pytest.fixture(scope="module")
def project(tmp_path_factory, spark):
    root = tmp_path_factory.mktemp("progress_project")
    write_streaming_project(root, "progress_project", "progress", {
        "counted_readings": "select id from {{ source('files', 'readings') }}",
    }, SOURCES, serve_after_run=True)
    return str(root)


def land(lakehouse, name: str, ids: range, modified: float) -> None:
    """A file whose modification time orders it (Spark's file source takes files oldest first)."""
    land_json_lines(landing_folder(lakehouse, "progress_readings"), name, ({"id": i} for i in ids), modified)


def test_every_batch_is_shown_and_lands_in_the_progress_table(dbt, project, spark, lakehouse, capsys):
    start, now = 0, time.time()
    for n, rows in enumerate(ROWS_PER_FILE):
        land(lakehouse, f"readings-{n}.json", range(start, start + rows), now - 60 + n)
        start += rows

    result = dbt("run", project_dir=project)

    assert result.success, failure_messages(result)
    shown = capsys.readouterr().out
    for batch, rows in enumerate(ROWS_PER_FILE):
        assert f"progress progress.counted_readings batch {batch}: {rows} rows in" in shown
    assert "streaming models" in shown and "counted_readings" in shown.split("streaming models")[1]

    recorded = spark.sql(
        "select batch_id, num_input_rows, model, batch_duration_ms from default._stream_progress "
        "where query_name = 'progress.counted_readings' order by batch_id"
    ).collect()
    assert [(r.batch_id, r.num_input_rows) for r in recorded] == list(enumerate(ROWS_PER_FILE))
    assert {r.model for r in recorded} == {"counted_readings"}
    assert all(r.batch_duration_ms > 0 for r in recorded)

    land(lakehouse, "readings-3.json", range(start, start + 5), time.time())
    assert dbt("run", project_dir=project).success
    latest = spark.sql(
        "select batch_id, num_input_rows from default._stream_progress "
        "where query_name = 'progress.counted_readings' order by batch_id desc limit 1"
    ).first()
    assert (latest.batch_id, latest.num_input_rows) == (3, 5)


def test_progress_older_than_the_retention_is_deleted(spark, monkeypatch):
    table = "progress_retention._stream_progress"
    monkeypatch.setenv(progress_table.TABLE_VARIABLE, table)
    monkeypatch.setenv(progress_table.RETENTION_VARIABLE, "7")
    spark.sql("create schema if not exists progress_retention")

    def batch(batch_id: int, days_ago: float) -> dict:
        at = datetime.now(timezone.utc) - timedelta(days=days_ago)
        return {"name": "s.m", "id": "q", "runId": "r", "batchId": batch_id,
                "timestamp": at.isoformat().replace("+00:00", "Z"), "numInputRows": 1,
                "durationMs": {"addBatch": 5, "triggerExecution": 9}}

    progress_table.append(spark, [progress_table.progress_row(batch(0, 30)),
                                  progress_table.progress_row(batch(1, 8))])
    recorder = ProgressRecorder()
    recorder.record(batch(2, 0.1))
    recorder.record(batch(3, 6.9))

    assert recorder.flush(spark) == 2

    kept = [r.batch_id for r in spark.sql(f"select batch_id from {table} order by batch_id").collect()]
    assert kept == [2, 3]

    # The next process's flush within a day deletes nothing (each DELETE is a Spark job and a commit).
    progress_table.append(spark, [progress_table.progress_row(batch(4, 30))])
    later = ProgressRecorder()
    later.record(batch(5, 0.1))
    assert later.flush(spark) == 1
    kept = [r.batch_id for r in spark.sql(f"select batch_id from {table} order by batch_id").collect()]
    assert kept == [2, 3, 4, 5]


def served_batch(batch_id: int) -> dict:
    return {"name": "s.m", "id": "q", "runId": "r", "batchId": batch_id,
            "timestamp": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"), "numInputRows": 1,
            "durationMs": {"addBatch": 5, "triggerExecution": 9}}


def test_while_serving_progress_is_appended_on_a_thread_of_its_own_and_the_table_compacted(
    spark, lakehouse, monkeypatch
):
    table = "progress_kept._stream_progress"
    monkeypatch.setenv(progress_table.TABLE_VARIABLE, table)
    monkeypatch.setenv(upkeep.COMPACT_AT_VARIABLE, "2")  # checked at every flush
    spark.sql("create schema if not exists progress_kept")
    recorder, said = ProgressRecorder(), []
    keeper = ProgressKeeper(spark, recorder, lakehouse, said.append, every_seconds=0.1).start()
    try:
        for batch_id in range(3):  # one flush, one file, per batch
            recorder.record(served_batch(batch_id))
            deadline = time.monotonic() + 60
            while not spark.catalog.tableExists(table) or spark.table(table).count() <= batch_id:
                assert time.monotonic() < deadline, f"batch {batch_id} never reached {table}: {said}"
                time.sleep(0.1)
        recorder.record(served_batch(3))
    finally:
        keeper.stop()  # appends what is left

    ids = [row.batch_id for row in spark.sql(f"select batch_id from {table} order by batch_id").collect()]
    assert ids == list(range(4))
    assert [line for line in said if line.startswith(f"Maintained {table}: compacted")], said
    history = [row.operation for row in spark.sql(f"describe history {table}").collect()]
    assert "OPTIMIZE" in history
    assert spark.sql(f"describe detail {table}").first().numFiles < 4


def test_on_a_terminal_each_stream_is_one_row_redrawn_with_its_latest_batch():
    screen = io.StringIO()
    display = LiveProgress(out=screen, live=True, width=120)

    with display:
        for batch, rows in enumerate(ROWS_PER_FILE):
            display.batch({"name": "silver.readings", "batchId": batch, "numInputRows": rows,
                           "processedRowsPerSecond": 12.5, "durationMs": {"addBatch": 1, "triggerExecution": 640},
                           "eventTime": {"watermark": "2026-11-22T09:00:00.000Z"}})
        display.batch({"name": "gold.totals", "batchId": 7, "numInputRows": 9,
                       "durationMs": {"addBatch": 1, "triggerExecution": 90}})

    final = screen.getvalue().split("streams")[-1]  # the last redraw
    assert "progress silver.readings" not in screen.getvalue()  # a table, not lines
    readings = next(line for line in final.splitlines() if "silver.readings" in line)
    assert [cell.strip() for cell in readings.strip("│ ").split("│")] == [
        "silver.readings", "2", "4", "12", "0.64 s", "2026-11-22 09:00:00Z",
    ]
    assert any("gold.totals" in line and "│     7 │" in line for line in final.splitlines())


def test_a_project_without_the_serving_hook_still_records_its_batches_and_is_told_how_to_serve(
    dbt, spark, lakehouse, tmp_path, capsys
):
    project = str(write_streaming_project(tmp_path / "project", "unhooked", "unhooked", {
        "unhooked_readings": "select id from {{ source('files', 'readings') }}",
    }, SOURCES.replace("progress_readings", "unhooked_readings")))
    land_json_lines(landing_folder(lakehouse, "unhooked_readings"), "a.json", ({"id": i} for i in range(3)))

    assert dbt("run", project_dir=project).success
    assert "streaming models" in capsys.readouterr().out  # the summary, printed at the end
    recorded = spark.sql("select batch_id, num_input_rows from default._stream_progress "
                         "where query_name = 'unhooked.unhooked_readings'").collect()
    assert [(r.batch_id, r.num_input_rows) for r in recorded] == [(0, 3)]

    try:
        served = dbt("run", "--vars", "{stream_trigger: {processing_time: '1 second'}}", project_dir=project)
        assert served.success, failure_messages(served)
        said = capsys.readouterr().out
        assert "\nunhooked_readings: processing_time or on_new_data trigger, but this project does not serve" in said
        assert said.count("does not serve") == 1 and '"{{ serve_streaming_queries() }}"' in said
    finally:
        for query in spark.streams.active:
            query.stop()
