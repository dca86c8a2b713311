"""`make report`: the progress table drawn as throughput and batch duration, one series per model,
and, when a model has expectations, the rows each expectation failed per batch."""

from __future__ import annotations

import re
import statistics
import uuid
from datetime import datetime, timedelta, timezone
from typing import Optional

import pytest

from dbt_spark_streaming.commands import report as progress_report
from python_runners.ops import package_command

# Two `dbt run`s ten minutes apart: (rows in, trigger duration in ms) of each model's batches.

from dbt_spark_streaming.progress import table as progress_table
BATCHES = {
    "bronze.bronze_recordings": [(120, 2460), (118, 1830), (131, 1710), (240, 2950), (124, 1990)],
    "silver.silver_recordings": [(120, 3310), (118, 2740), (131, 2650), (240, 4120), (124, 2880)],
    "gold.device_counts": [(120, 3940), (118, 3120), (131, 3300), (240, 5210), (124, 3050)],
}
STATEFUL = {"gold.device_counts"}


def progress(query: str, batch_id: int, rows: int, duration_ms: int, at: datetime,
             expectations: Optional[dict] = None) -> dict:
    """A StreamingQueryProgress as Spark reports it (as JSON) for a file source into Delta;
    `expectations`: the batch's counts of a model with expectations (observedMetrics)."""
    return {
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, query)),
        "runId": str(uuid.uuid4()),
        "name": query,
        "timestamp": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "batchId": batch_id,
        "batchDuration": duration_ms,
        "numInputRows": rows,
        "inputRowsPerSecond": rows / 30.0,
        "processedRowsPerSecond": rows / (duration_ms / 1000),
        "durationMs": {
            "addBatch": duration_ms - 190, "commitOffsets": 45, "getBatch": 3,
            "latestOffset": 22, "queryPlanning": 85, "triggerExecution": duration_ms, "walCommit": 35,
        },
        "stateOperators": [{
            "operatorName": "stateStoreSave", "numRowsTotal": 12, "numRowsUpdated": 12,
            "numRowsDroppedByWatermark": 0,
        }] if query in STATEFUL else [],
        "sources": [{"description": "FileStreamSource[file:/lakehouse/landing/recordings]",
                     "numInputRows": rows}],
        "sink": {"description": f"DeltaSink[{query}]", "numOutputRows": -1},
        "observedMetrics": {"expectations": expectations} if expectations else {},
    }


def progress_rows(first_run: datetime) -> list[tuple]:
    """The batches of two runs, the first at first_run and the second ten minutes later."""
    second_run = first_run + timedelta(minutes=10)
    rows = []
    for query, batches in BATCHES.items():
        for batch_id, (rows_in, duration_ms) in enumerate(batches):
            run, index = (first_run, batch_id) if batch_id < 3 else (second_run, batch_id - 3)
            at = run + timedelta(seconds=30 * index)
            rows.append(progress_table.progress_row(progress(query, batch_id, rows_in, duration_ms, at)))
    return rows


def summary_cells(page: str, model: str) -> list[float]:
    """batches, rows in, median batch ms, p95 batch ms, median rows/s of the model's table row."""
    cells = re.search(rf"<tr><td>{model}</td>(.*?)</tr>", page).group(1)
    return [float(value) for value in re.findall(r"<td>([^<]*)</td>", cells)]


def test_the_report_draws_one_series_per_model(spark, monkeypatch, tmp_path):
    monkeypatch.setenv(progress_table.TABLE_VARIABLE, "report_test._stream_progress")
    spark.sql("create schema if not exists report_test")
    # Anchored when the test runs, not when it is collected: a long suite would push them past --since-hours.
    first_run = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(minutes=20)
    yesterday = progress("bronze.bronze_recordings", 99, 5000, 60_000, first_run - timedelta(days=1))
    progress_table.append(spark, [*progress_rows(first_run), progress_table.progress_row(yesterday)])

    assert package_command.run("report", ["--out", str(tmp_path), "--since-hours", "1"]) == 0

    png = (tmp_path / "stream_progress.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
    page = (tmp_path / "stream_progress.html").read_text()
    assert page.count("<svg") == 1
    models = sorted(query.split(".")[1] for query in BATCHES)
    for panel in ("rate", "duration"):
        assert sorted(re.findall(rf'<g id="{panel}:([^"]+)"', page)) == models
    for query, batches in BATCHES.items():  # yesterday's batch is older than --since-hours
        durations = [duration_ms for _, duration_ms in batches]
        rates = [rows_in / (duration_ms / 1000) for rows_in, duration_ms in batches]
        assert summary_cells(page, query.split(".")[1]) == pytest.approx([
            len(batches),
            sum(rows_in for rows_in, _ in batches),
            statistics.median(durations),
            max(durations),  # the 95th percentile (nearest rank) of five batches is the slowest
            statistics.median(rates),
        ], abs=0.05)


def test_a_batch_without_a_rate_gets_one_from_its_rows_and_duration(tmp_path):
    at = datetime(2026, 11, 22, 10, 0, tzinfo=timezone.utc)
    rows = [
        {"model": "silver_recordings", "batch_timestamp": at, "num_input_rows": 500,
         "processed_rows_per_second": None, "batch_duration_ms": 2000},
        {"model": "silver_recordings", "batch_timestamp": at + timedelta(seconds=30),
         "num_input_rows": 0, "processed_rows_per_second": None, "batch_duration_ms": 0},
    ]

    png, page = progress_report.write_report(rows, tmp_path)  # no Spark needed

    assert png.read_bytes().startswith(b"\x89PNG")
    assert summary_cells(page.read_text(), "silver_recordings") == [2, 500, 1000, 2000, 125.0]


def test_no_progress_table_says_what_to_do(spark, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(progress_table.TABLE_VARIABLE, "report_missing._stream_progress")

    assert package_command.run("report", ["--out", str(tmp_path)]) == 1

    message = capsys.readouterr().err
    assert "report_missing._stream_progress" in message and "`dbt run`" in message
    assert not (tmp_path / "stream_progress.png").exists()


def test_an_empty_progress_table_says_what_to_do(spark, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(progress_table.TABLE_VARIABLE, "report_empty._stream_progress")
    spark.sql("create schema if not exists report_empty")
    empty = spark.createDataFrame([], progress_table.SCHEMA)
    empty.write.format("delta").saveAsTable("report_empty._stream_progress")

    assert package_command.run("report", ["--out", str(tmp_path)]) == 1

    message = capsys.readouterr().err
    assert "report_empty._stream_progress" in message and "has no batches" in message
    assert "`dbt run`" in message
    assert not (tmp_path / "stream_progress.png").exists()


def test_expectations_get_a_panel_and_totals_once_a_model_has_them(spark, monkeypatch, tmp_path):
    """The table first as written before expectations existed (without their columns), then with
    a run whose silver model has expectations appended (the columns added as it writes)."""
    monkeypatch.setenv(progress_table.TABLE_VARIABLE, "report_expectations._stream_progress")
    spark.sql("create schema if not exists report_expectations")
    first_run = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(minutes=20)
    before = [column for column, _kind in progress_table.COLUMNS if "expectations" not in column]
    old_schema = ", ".join(f"{column} {kind}" for column, kind in progress_table.COLUMNS if column in before)
    older_rows = [row[:len(before)] for row in progress_rows(first_run)]
    spark.createDataFrame(older_rows, old_schema).write.format("delta").saveAsTable(
        "report_expectations._stream_progress")

    assert package_command.run("report", ["--out", str(tmp_path / "before")]) == 0

    page = (tmp_path / "before" / "stream_progress.html").read_text()
    assert "<svg" in page and 'id="expectation:' not in page and "Per expectation" not in page

    counts = [  # rows in, dropped, quarantined, warned per batch
        (120, 2, 1, 0), (118, 0, 0, 4), (131, 5, 2, 1),
    ]
    later = first_run + timedelta(minutes=15)
    progress_table.append(spark, [
        progress_table.progress_row(progress(
            "silver.silver_recordings", 5 + index, rows, 2000, later + timedelta(seconds=30 * index),
            {"rows": rows, "dropped": dropped, "quarantined": quarantined,
             "quarantine:heartbeat_plausible": quarantined, "warn:device_known": warned,
             "drop:not_from_the_future": dropped},
        ))
        for index, (rows, dropped, quarantined, warned) in enumerate(counts)
    ])

    assert package_command.run("report", ["--out", str(tmp_path / "after")]) == 0

    page = (tmp_path / "after" / "stream_progress.html").read_text()
    assert sorted(re.findall(r'<g id="expectation:([^"]+)"', page)) == [
        "silver_recordings.device_known", "silver_recordings.heartbeat_plausible",
        "silver_recordings.not_from_the_future",
    ]
    assert sorted(re.findall(r'<g id="rate:([^"]+)"', page)) == sorted(
        query.split(".")[1] for query in BATCHES)  # the older batches still drawn
    checked = sum(rows for rows, *_ in counts)
    assert re.search(rf"<tr><td>silver_recordings</td><td>3</td><td>{checked}</td><td>7</td>"
                     r"<td>3</td></tr>", page)  # per model: batches, checked, dropped, quarantined
    for name, action, failed in (("heartbeat_plausible", "quarantine", 3),
                                 ("device_known", "warn", 5), ("not_from_the_future", "drop", 7)):
        assert f"<tr><td>silver_recordings</td><td>{name}</td><td>{action}</td><td>{checked}</td>" \
               f"<td>{failed}</td>" in page
    assert "device_counts</td><td>" not in page.split("Expectations per model")[1]
