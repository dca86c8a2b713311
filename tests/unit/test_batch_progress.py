"""One reader of a micro-batch's progress (adapter/dbt_spark_streaming/progress/batch.py), and each
part that shows or keeps a batch reading it the same way: the live view, the progress table's
row, the status file, the run summary. Recorded progress as Spark reports it; no JVM."""

from __future__ import annotations

import copy
import io
import json
import math
from datetime import datetime, timezone
from types import SimpleNamespace

import pytest
from pyspark.sql.streaming.listener import StreamingQueryProgress

from dbt_spark_streaming.run import streaming_run
from dbt_spark_streaming.progress import status_file
from dbt_spark_streaming.progress.batch import BatchProgress, batches_of, iso, last_batch
from dbt_spark_streaming.progress.live import LiveProgress, batch_line
from dbt_spark_streaming.progress.table import COLUMNS, progress_row
from dbt_spark_streaming.run.streaming_run import NoStreamingRunError, StreamingRun
from dbt_spark_streaming.run.serving import ServedQuery
from dbt_spark_streaming.run.summary import summarise

# A stream-stream join with a watermark, reading two sources (Spark 4.1's JSON, shortened ids).
JOIN_BATCH = {
    "id": "5d0f2a4e-1c1e-4b8f-9a55-0c6f0d1e2a01",
    "runId": "a7c3e9b2-7f2d-4e1a-8c3b-5e9d1f0a2b02",
    "name": "silver.recordings_with_device_status",
    "timestamp": "2026-01-01T00:50:03.123Z",
    "batchId": 3,
    "batchDuration": 3040,
    "numInputRows": 272,
    "inputRowsPerSecond": 27.2,
    "processedRowsPerSecond": 89.47368421052632,
    "durationMs": {"addBatch": 2710, "commitOffsets": 61, "getBatch": 0, "latestOffset": 40,
                   "queryPlanning": 132, "triggerExecution": 3040, "walCommit": 66},
    "eventTime": {"avg": "2026-01-01T00:55:00.000Z", "max": "2026-01-01T01:00:00.000Z",
                  "min": "2026-01-01T00:50:00.000Z", "watermark": "2026-01-01T00:50:00.000Z"},
    "stateOperators": [
        {"operatorName": "symmetricHashJoin", "numRowsTotal": 344, "numRowsUpdated": 272,
         "allUpdatesTimeMs": 51, "numRowsRemoved": 0, "allRemovalsTimeMs": 0, "commitTimeMs": 420,
         "memoryUsedBytes": 212224, "numRowsDroppedByWatermark": 3, "numShufflePartitions": 2,
         "numStateStoreInstances": 4, "customMetrics": {}},
        {"operatorName": "dedupe", "numRowsTotal": 56, "numRowsUpdated": 8,
         "allUpdatesTimeMs": 3, "numRowsRemoved": 0, "allRemovalsTimeMs": 0, "commitTimeMs": 40,
         "memoryUsedBytes": 10240, "numRowsDroppedByWatermark": 2, "numShufflePartitions": 2,
         "numStateStoreInstances": 2, "customMetrics": {}},
    ],
    "sources": [
        {"description": "FileStreamSource[file:/lakehouse/landing/recordings]",
         "startOffset": {"logOffset": 2}, "endOffset": {"logOffset": 3}, "latestOffset": None,
         "numInputRows": 200, "inputRowsPerSecond": 20.0, "processedRowsPerSecond": 65.8},
        {"description": "DeltaSource[file:/lakehouse/warehouse/bronze.db/bronze_device_status]",
         "startOffset": None, "endOffset": {"reservoirVersion": 4}, "latestOffset": None,
         "numInputRows": 72, "inputRowsPerSecond": 7.2, "processedRowsPerSecond": 23.7},
    ],
    "sink": {"description": "DeltaSink[file:/lakehouse/warehouse/silver.db/x]", "numOutputRows": -1},
    "observedMetrics": {},
}

# The first batch of a query whose watermark has seen no event yet; the JVM's JSON leaves NaN
# rates out (no time elapsed since the last trigger).
FIRST_BATCH = {
    "id": "q-1", "runId": "r-1", "name": "gold.device_counts",
    "timestamp": "2026-01-01T00:00:01.500Z", "batchId": 0, "batchDuration": 1590,
    "numInputRows": 200,
    "durationMs": {"addBatch": 1400, "triggerExecution": 1590},
    "eventTime": {"watermark": "1970-01-01T00:00:00.000Z"},
    "stateOperators": [{"operatorName": "stateStoreSave", "numRowsTotal": 12, "numRowsUpdated": 12}],
    "sources": [{"description": "DeltaSource[...]", "numInputRows": 200}],
    "sink": {"description": "DeltaSink[...]", "numOutputRows": 12},
}

# A trigger that found no new data: reported every 10 s while idle, not a batch.
IDLE_TRIGGER = {
    "id": "q-1", "runId": "r-1", "name": "gold.device_counts",
    "timestamp": "2026-01-01T00:00:11.500Z", "batchId": 1, "batchDuration": 2,
    "numInputRows": 0, "inputRowsPerSecond": 0.0, "processedRowsPerSecond": 0.0,
    "durationMs": {"latestOffset": 2, "triggerExecution": 2},
    "stateOperators": [], "sources": [], "sink": {"description": "DeltaSink[...]", "numOutputRows": -1},
}


def test_every_field_of_a_recorded_batch():
    batch = BatchProgress.from_progress(JOIN_BATCH)

    assert (batch.query_name, batch.model, batch.label) == (
        "silver.recordings_with_device_status", "recordings_with_device_status",
        "silver.recordings_with_device_status")
    assert (batch.query_id, batch.run_id, batch.batch_id) == (JOIN_BATCH["id"], JOIN_BATCH["runId"], 3)
    assert batch.timestamp == datetime(2026, 1, 1, 0, 50, 3, 123000, tzinfo=timezone.utc)
    assert batch.input_rows == 272
    assert batch.input_rows_per_second == 27.2
    assert batch.processed_rows_per_second == pytest.approx(89.47, abs=0.01)
    assert batch.duration_ms == 3040 and batch.durations_ms["addBatch"] == 2710
    assert batch.watermark == datetime(2026, 1, 1, 0, 50, tzinfo=timezone.utc)
    assert batch.late_rows == 5  # summed over both state operators
    assert (batch.state_rows, batch.state_rows_updated) == (400, 280)
    assert batch.rows_written is None  # Delta's sink reports -1
    assert batch.ran_a_batch
    assert batch.raw == JOIN_BATCH


def test_each_source_of_a_batch():
    files, delta = BatchProgress.from_progress(JOIN_BATCH).sources

    assert (files.description, files.input_rows, files.input_rows_per_second,
            files.processed_rows_per_second) == (
        "FileStreamSource[file:/lakehouse/landing/recordings]", 200, 20.0, 65.8)
    assert delta.description.startswith("DeltaSource[") and delta.input_rows == 72
    assert sum(source.input_rows for source in (files, delta)) == 272


@pytest.mark.parametrize("rate", [float("nan"), float("inf"), float("-inf"), None, "NaN"])
def test_a_rate_that_is_not_a_number_is_none(rate):
    progress = {**JOIN_BATCH, "inputRowsPerSecond": rate, "processedRowsPerSecond": rate,
                "sources": [{**JOIN_BATCH["sources"][0], "processedRowsPerSecond": rate}]}

    batch = BatchProgress.from_progress(progress)

    assert batch.input_rows_per_second is None and batch.processed_rows_per_second is None
    assert batch.sources[0].processed_rows_per_second is None


def test_rates_left_out_of_the_json_are_none():
    batch = BatchProgress.from_progress(FIRST_BATCH)

    assert batch.input_rows_per_second is None and batch.processed_rows_per_second is None
    assert batch.sources[0].input_rows_per_second is None


def test_nan_written_by_python_into_json_text_is_none():
    text = json.dumps({**FIRST_BATCH, "processedRowsPerSecond": float("nan")})
    assert "NaN" in text

    assert BatchProgress.from_progress(text).processed_rows_per_second is None


def test_the_no_watermark_yet_value_is_none():
    assert BatchProgress.from_progress(FIRST_BATCH).watermark is None


def test_a_query_without_a_watermark_has_none():
    without = {key: value for key, value in JOIN_BATCH.items() if key != "eventTime"}
    assert BatchProgress.from_progress(without).watermark is None
    no_watermark_key = {**JOIN_BATCH, "eventTime": {"max": "2026-01-01T01:00:00.000Z"}}
    assert BatchProgress.from_progress(no_watermark_key).watermark is None


def test_a_watermark_with_milliseconds_keeps_them():
    progress = {**JOIN_BATCH, "eventTime": {"watermark": "2026-01-01T00:50:00.250Z"}}

    watermark = BatchProgress.from_progress(progress).watermark

    assert watermark == datetime(2026, 1, 1, 0, 50, 0, 250000, tzinfo=timezone.utc)
    assert iso(watermark) == "2026-01-01T00:50:00.250Z"


def test_late_rows_missing_are_zero():
    assert BatchProgress.from_progress(FIRST_BATCH).late_rows == 0  # the key left out
    assert BatchProgress.from_progress({**FIRST_BATCH, "stateOperators": []}).late_rows == 0
    none_key = {**FIRST_BATCH, "stateOperators": [{"numRowsDroppedByWatermark": None}]}
    assert BatchProgress.from_progress(none_key).late_rows == 0
    assert BatchProgress.from_progress({k: v for k, v in FIRST_BATCH.items()
                                        if k != "stateOperators"}).late_rows == 0


def test_rows_written_when_the_sink_says():
    assert BatchProgress.from_progress(FIRST_BATCH).rows_written == 12


def test_an_idle_trigger_is_not_a_batch():
    idle = BatchProgress.from_progress(IDLE_TRIGGER)

    assert not idle.ran_a_batch and idle.batch_id == 1 and idle.input_rows == 0
    assert not BatchProgress.from_progress({**JOIN_BATCH, "batchId": None}).ran_a_batch


def test_json_text_a_dict_and_pysparks_progress_object_read_the_same():
    from_dict = BatchProgress.from_progress(JOIN_BATCH)
    from_text = BatchProgress.from_progress(json.dumps(JOIN_BATCH))
    from_pyspark = BatchProgress.from_progress(StreamingQueryProgress.fromJson(copy.deepcopy(JOIN_BATCH)))

    assert from_dict == from_text == from_pyspark
    assert from_pyspark.query_id == JOIN_BATCH["id"]  # a str, not pyspark's UUID
    assert BatchProgress.from_progress(from_dict) is from_dict


def test_a_batch_time_is_written_back_as_spark_writes_it():
    batch = BatchProgress.from_progress(JOIN_BATCH)

    assert iso(batch.timestamp) == JOIN_BATCH["timestamp"]
    assert iso(None) is None


def test_the_recent_progress_of_a_query_its_batches_and_its_last():
    query = SimpleNamespace(recentProgress=[FIRST_BATCH, JOIN_BATCH, IDLE_TRIGGER], isActive=False)

    assert [batch.batch_id for batch in batches_of(query)] == [0, 3]
    assert last_batch(query).batch_id == 3
    assert last_batch(SimpleNamespace(recentProgress=[IDLE_TRIGGER])) is None
    assert last_batch(SimpleNamespace(recentProgress=None)) is None


# The consumers: each shows what the reader read.

def test_the_live_line_of_a_batch():
    assert batch_line(JOIN_BATCH) == (
        "progress silver.recordings_with_device_status batch 3: 272 rows in, 89 rows/s, 3.04 s, "
        "watermark 2026-01-01 00:50:00Z"
    )
    assert batch_line(FIRST_BATCH) == "progress gold.device_counts batch 0: 200 rows in, - rows/s, 1.59 s"
    slow = {**FIRST_BATCH, "processedRowsPerSecond": 2.345}
    assert "2.3 rows/s" in batch_line(slow)


def test_the_progress_table_row_of_a_batch():
    columns = [column for column, _kind in COLUMNS]

    row = dict(zip(columns, progress_row(JOIN_BATCH)))
    first = dict(zip(columns, progress_row(FIRST_BATCH)))

    assert row["query_name"] == "silver.recordings_with_device_status"
    assert row["model"] == "recordings_with_device_status"
    assert (row["batch_id"], row["num_input_rows"], row["batch_duration_ms"]) == (3, 272, 3040)
    assert row["batch_timestamp"] == datetime(2026, 1, 1, 0, 50, 3, 123000, tzinfo=timezone.utc)
    assert row["watermark"] == datetime(2026, 1, 1, 0, 50, tzinfo=timezone.utc)
    assert (row["rows_dropped_by_watermark"], row["state_rows"]) == (5, 400)
    assert json.loads(row["progress_json"]) == JOIN_BATCH
    assert first["watermark"] is None and first["processed_rows_per_second"] is None
    as_batch = dict(zip(columns, progress_row(BatchProgress.from_progress(JOIN_BATCH))))
    assert {**as_batch, "recorded_at": None} == {**row, "recorded_at": None}
    assert row["expectations"] is None and row["rows_checked_by_expectations"] is None


def test_the_progress_table_row_keeps_the_counts_of_each_expectation():
    columns = [column for column, _kind in COLUMNS]
    counted = {**JOIN_BATCH, "observedMetrics": {"expectations": {
        "rows": 272, "dropped": 3, "quarantined": 2, "quarantine:heartbeat_plausible": 2,
        "warn:device_known": 5, "drop:not_from_the_future": 4,
    }}}

    row = dict(zip(columns, progress_row(counted)))

    assert (row["rows_checked_by_expectations"], row["rows_dropped_by_expectations"],
            row["rows_quarantined_by_expectations"]) == (272, 3, 2)
    assert row["expectations"] == [
        {"name": "heartbeat_plausible", "action": "quarantine", "rows_checked": 272, "rows_failed": 2},
        {"name": "device_known", "action": "warn", "rows_checked": 272, "rows_failed": 5},
        {"name": "not_from_the_future", "action": "drop", "rows_checked": 272, "rows_failed": 4},
    ]


def test_the_status_file_entry_of_a_query(tmp_path):
    served = ServedQuery("gold.device_counts", SimpleNamespace(isActive=True, recentProgress=[FIRST_BATCH, IDLE_TRIGGER]),
                         restarts=1)

    status = status_file._query_status(served, latest=None)

    assert status["last_progress"] == {
        "batch_id": 0, "timestamp": "2026-01-01T00:00:01.500Z", "num_input_rows": 200,
        "processed_rows_per_second": None, "batch_duration_ms": 1590, "watermark": None,
        "expectations": None,
    }
    assert status["expectations_since_start"] is None
    assert (status["state"], status["lag_seconds"]) == ("active", None)  # a processing-time query
    heard = BatchProgress.from_progress(JOIN_BATCH)
    status = status_file._query_status(served, latest=lambda name: heard)
    assert status["last_progress"]["watermark"] == "2026-01-01T00:50:00.000Z"
    json.dumps(status, allow_nan=False)  # no NaN in the file


def test_the_run_summary_of_a_model():
    late = {**FIRST_BATCH, "batchId": 1, "numInputRows": 5,
            "stateOperators": [{"numRowsTotal": 12, "numRowsDroppedByWatermark": 4}]}
    query = SimpleNamespace(recentProgress=[FIRST_BATCH, IDLE_TRIGGER, late], isActive=False)

    summary = summarise("device_counts", query, written=12, seconds=2.5)

    assert (summary.batches, summary.input_rows, summary.late_rows) == (2, 205, 4)
    assert summary.message() == "STREAMED 205 rows in, 12 written, 4 late rows dropped, 2 batches (caught up)"


# The run: one owner for the display, the recorder, the summaries and the served writes.

@pytest.fixture
def no_run(monkeypatch):
    monkeypatch.setattr(streaming_run, "_current", None)


def test_the_recorder_shows_each_batch_on_the_runs_display(no_run):
    screen = io.StringIO()
    run = StreamingRun.start(LiveProgress(out=screen, live=False))

    run.recorder.record(json.dumps(IDLE_TRIGGER))
    run.recorder.record(json.dumps(FIRST_BATCH))

    assert screen.getvalue() == "progress gold.device_counts batch 0: 200 rows in, - rows/s, 1.59 s\n"
    assert run.recorder.latest_batch("gold.device_counts").batch_id == 0


def test_a_new_run_takes_over_the_recorder_and_starts_with_nothing_else(no_run):
    first_screen, second_screen = io.StringIO(), io.StringIO()
    first = StreamingRun.start(LiveProgress(out=first_screen, live=False))
    first.summaries.append("a summary")
    first.keep_serving(SimpleNamespace(query_name="gold.device_counts"))
    first.recorder.record(FIRST_BATCH)

    second = StreamingRun.start(LiveProgress(out=second_screen, live=False))
    second.recorder.record(JOIN_BATCH)

    assert StreamingRun.current() is second
    assert second.recorder is first.recorder  # the session's one listener, its batches kept
    assert "batch 3" in second_screen.getvalue() and "batch 3" not in first_screen.getvalue()
    assert second.summaries == [] and second.served_write("gold.device_counts") is None
    assert first.served_write("gold.device_counts").query_name == "gold.device_counts"


def test_without_a_run_started_current_says_so(no_run):
    assert StreamingRun.current_or_none() is None
    with pytest.raises(NoStreamingRunError, match="StreamingRun.start"):
        StreamingRun.current()


def test_a_run_listens_to_a_session_once(no_run):
    added = []
    spark = SimpleNamespace(_jsparkSession=object(),
                            streams=SimpleNamespace(addListener=added.append))
    run = StreamingRun.start()

    assert run.listen(spark) is run.recorder
    run.listen(spark)
    StreamingRun.start().listen(spark)  # the next run, same session: the same listener

    assert added == [run.recorder]


def test_nan_never_reaches_a_consumer():
    progress = {**JOIN_BATCH, "processedRowsPerSecond": float("nan"), "inputRowsPerSecond": math.inf}
    row = progress_row(progress)

    assert not any(isinstance(value, float) and not math.isfinite(value) for value in row)
    assert ", - rows/s," in batch_line(progress)
