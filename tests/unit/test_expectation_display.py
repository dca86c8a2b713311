"""Expectations' counts where people look: the live line and table, the run's summary table, the
recorder's totals since the service started, the status file and `service status`, the report's
tables and panel. Each batch's counts as Spark reports them (observedMetrics); no JVM."""

from __future__ import annotations

import io
import json
import re
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

from dbt_spark_streaming.commands import report as progress_report
from dbt_spark_streaming.commands import service
from dbt_spark_streaming.config.expectations import ExpectationCounts
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.progress import status_file
from dbt_spark_streaming.progress.batch import BatchProgress
from dbt_spark_streaming.progress.live import LiveProgress, batch_line, print_summary
from dbt_spark_streaming.progress.recorder import ProgressRecorder
from dbt_spark_streaming.progress.table import COLUMNS, progress_row
from dbt_spark_streaming.run.serving import ServedQuery

QUERY = "silver.silver_recordings"


def checked_batch(batch_id: int, rows: int, dropped: int, quarantined: int, warned: int,
                  query: str = QUERY) -> dict:
    """A batch of a model with three expectations, one per action that lets the batch through."""
    return {
        "id": "q-7", "runId": "r-7", "name": query,
        "timestamp": f"2026-01-01T00:0{batch_id}:00.000Z", "batchId": batch_id,
        "numInputRows": rows, "processedRowsPerSecond": 100.0,
        "durationMs": {"addBatch": 900, "triggerExecution": 1000},
        "sink": {"description": "DeltaSink[...]", "numOutputRows": -1},
        "observedMetrics": {"expectations": {
            "rows": rows, "dropped": dropped, "quarantined": quarantined,
            "quarantine:heartbeat_plausible": quarantined, "warn:device_known": warned,
            "drop:not_from_the_future": dropped,
        }},
    }


UNCHECKED = {  # a model without expectations
    "id": "q-1", "runId": "r-1", "name": "gold.device_counts",
    "timestamp": "2026-01-01T00:00:01.500Z", "batchId": 0, "numInputRows": 200,
    "durationMs": {"addBatch": 1400, "triggerExecution": 1590},
    "sink": {"description": "DeltaSink[...]", "numOutputRows": 12},
}


# The live view

def test_the_live_line_says_what_the_expectations_left_out_and_warned_of():
    assert batch_line(checked_batch(3, 200, 3, 1, 4)) == (
        "progress silver.silver_recordings batch 3: 200 rows in, 100 rows/s, 1.00 s, "
        "3 dropped and 1 quarantined by expectations, warnings: device_known 4"
    )
    assert batch_line(checked_batch(4, 50, 0, 0, 0)).endswith(
        "1.00 s, no row left out by expectations")
    assert batch_line(UNCHECKED) == "progress gold.device_counts batch 0: 200 rows in, - rows/s, 1.59 s"


def test_the_live_table_has_an_expectations_column_while_a_stream_has_expectations():
    screen = io.StringIO()
    display = LiveProgress(out=screen, live=True, width=200)
    with display:
        display.batch(UNCHECKED)
        display.batch(checked_batch(3, 200, 3, 1, 4))
    header, checked_row = _table_line(screen, "stream"), _table_line(screen, QUERY)

    assert header[-1] == "expectations"
    assert checked_row[-1] == "3 dropped and 1 quarantined, warnings: device_known 4"
    assert _table_line(screen, "gold.device_counts")[-1] == ""

    without = io.StringIO()
    display = LiveProgress(out=without, live=True, width=200)
    with display:
        display.batch(UNCHECKED)
    assert "expectations" not in without.getvalue()
    assert _table_line(without, "stream")[-1] == "watermark"


def test_the_run_summary_table_adds_the_expectations_only_when_a_model_has_them():
    counts = BatchProgress.from_progress(checked_batch(0, 120, 2, 1, 0)).expectations.plus(
        BatchProgress.from_progress(checked_batch(1, 80, 0, 0, 5)).expectations)
    summaries = [
        SimpleNamespace(model="silver_recordings", batches=2, input_rows=200, output_rows=197,
                        seconds=3.2, expectations=counts),
        SimpleNamespace(model="device_counts", batches=1, input_rows=200, output_rows=12,
                        seconds=1.6, expectations=ExpectationCounts()),
    ]
    screen = io.StringIO()

    print_summary(summaries, screen)

    assert _table_line(screen, "model")[-1] == "expectations"
    assert _table_line(screen, "silver_recordings") == [
        "silver_recordings", "2", "200", "197", "3.2", "2 dropped and 1 quarantined, warnings: device_known 5"]
    plain = io.StringIO()
    print_summary(summaries[1:], plain)
    assert "expectations" not in plain.getvalue()
    assert _table_line(plain, "device_counts") == ["device_counts", "1", "200", "12", "1.6"]


def _table_line(screen: io.StringIO, first_cell: str) -> list[str]:
    """The cells of the table's row that starts with first_cell, a cell wrapped over lines put
    back together."""
    rows: list[list[str]] = []
    for line in screen.getvalue().splitlines():
        cells = [cell.strip() for cell in re.split(r"[│┃]", line)[1:-1]]
        if cells and not cells[0] and rows:  # the row's cells go on on this line
            rows[-1] = [" ".join(filter(None, pair)) for pair in zip(rows[-1], cells)]
        elif cells:
            rows.append(cells)
    for cells in rows:
        if cells[0] == first_cell:
            return cells
    raise AssertionError(f"no line for {first_cell!r} in:\n{screen.getvalue()}")


# The recorder's totals, the status file and `service status`

def test_the_recorder_sums_each_querys_expectations_over_every_batch_it_hears():
    recorder = ProgressRecorder()

    recorder.record(checked_batch(0, 120, 2, 1, 0))
    recorder.record(UNCHECKED)
    recorder.record(json.dumps(checked_batch(1, 80, 3, 0, 5)))

    totals = recorder.expectation_totals(QUERY)
    assert (totals.rows_checked, totals.rows_dropped, totals.rows_quarantined) == (200, 5, 1)
    assert {rule.name: (rule.action, rule.rows_checked, rule.rows_failed) for rule in totals.rules} == {
        "heartbeat_plausible": ("quarantine", 200, 1), "device_known": ("warn", 200, 5),
        "not_from_the_future": ("drop", 200, 5),
    }
    assert not recorder.expectation_totals("gold.device_counts")
    assert not recorder.expectation_totals("never.heard")


def test_the_status_file_keeps_the_last_batchs_counts_and_those_since_the_start():
    recorder = ProgressRecorder()
    for batch in (checked_batch(0, 120, 2, 1, 0), checked_batch(1, 80, 3, 0, 5)):
        recorder.record(batch)
    served = ServedQuery(QUERY, SimpleNamespace(isActive=True, recentProgress=[]))

    status = status_file._query_status(served, recorder.latest_batch, recorder.expectation_totals)

    assert status["last_progress"]["expectations"] == {
        "rows_checked": 80, "rows_dropped": 3, "rows_quarantined": 0, "rules": [
            {"name": "heartbeat_plausible", "action": "quarantine", "rows_checked": 80, "rows_failed": 0},
            {"name": "device_known", "action": "warn", "rows_checked": 80, "rows_failed": 5},
            {"name": "not_from_the_future", "action": "drop", "rows_checked": 80, "rows_failed": 3},
        ]}
    since_start = status["expectations_since_start"]
    assert (since_start["rows_checked"], since_start["rows_dropped"], since_start["rows_quarantined"]) == (200, 5, 1)
    kept = json.loads(json.dumps(status))
    assert status_file.counts_from_json(kept["expectations_since_start"]) == recorder.expectation_totals(QUERY)


def test_a_status_file_from_before_expectations_reads_as_none():
    assert status_file.counts_from_json(None) == ExpectationCounts()
    assert not status_file.counts_from_json({})


def test_service_status_shows_the_expectations_of_the_last_batch_and_since_the_start(tmp_path, capsys):
    lakehouse = Lakehouse.from_env({"LAKEHOUSE_DIR": str(tmp_path)})
    recorder = ProgressRecorder()
    for batch in (checked_batch(0, 120, 2, 1, 0), checked_batch(1, 80, 3, 0, 5), UNCHECKED):
        recorder.record(batch)
    queries = [ServedQuery(name, SimpleNamespace(isActive=True, recentProgress=[]))
               for name in (QUERY, "gold.device_counts")]
    status_file.StatusFile(lakehouse).write(queries, latest=recorder.latest_batch,
                                            totals=recorder.expectation_totals)

    assert service.status(lakehouse) == 0

    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith(f"  {QUERY}: active, restarts 0, last batch 1 at 2026-01-01T00:01:00.000Z")
    assert lines[1].endswith("1000 ms, 3 dropped by expectations, warnings: device_known 5")
    assert lines[2] == (
        "    expectations since the service started: 200 rows checked, 5 dropped, 1 quarantined; "
        "rows failed: heartbeat_plausible (quarantine) 1, device_known (warn) 5, not_from_the_future (drop) 5"
    )
    assert lines[3].startswith("  gold.device_counts: active") and lines[3].endswith("1590 ms")
    assert len(lines) == 4  # no expectations line for the model without them


# The report, from the progress table's rows (as read_progress gives them)

def report_rows() -> list[dict]:
    """Two batches of a model with expectations, two of one without, and one of the first model
    from before it had expectations (its expectation columns null)."""
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    columns = [column for column, _kind in COLUMNS]
    batches = [
        {**checked_batch(0, 100, 0, 0, 0), "observedMetrics": {}},
        checked_batch(1, 120, 2, 1, 0), checked_batch(2, 80, 3, 0, 5), UNCHECKED,
        {**UNCHECKED, "batchId": 1},
    ]
    rows = []
    for index, batch in enumerate(batches):
        row = dict(zip(columns, progress_row(batch)))
        row["batch_timestamp"] = start + timedelta(seconds=30 * index)
        rows.append(row)
    return rows


def test_the_report_totals_per_model_and_per_expectation():
    rows = report_rows()

    assert progress_report.expectation_totals_per_model(rows) == [{
        "model": "silver_recordings", "batches": 2, "rows_checked": 200, "rows_dropped": 5,
        "rows_quarantined": 1,
    }]
    assert progress_report.expectation_totals(rows) == [
        {"model": "silver_recordings", "expectation": "heartbeat_plausible", "action": "quarantine",
         "rows_checked": 200, "rows_failed": 1, "failed_%": 0.5},
        {"model": "silver_recordings", "expectation": "device_known", "action": "warn",
         "rows_checked": 200, "rows_failed": 5, "failed_%": 2.5},
        {"model": "silver_recordings", "expectation": "not_from_the_future", "action": "drop",
         "rows_checked": 200, "rows_failed": 5, "failed_%": 2.5},
    ]


def test_the_report_draws_rows_failed_per_expectation_only_when_a_model_has_expectations(tmp_path, matplotlib_fonts):
    rows = report_rows()

    _, page = progress_report.write_report(rows, tmp_path / "checked")
    _, plain = progress_report.write_report(
        [row for row in rows if row["model"] == "device_counts"], tmp_path / "plain")

    html = page.read_text()
    assert sorted(re.findall(r'<g id="expectation:([^"]+)"', html)) == [
        "silver_recordings.device_known", "silver_recordings.heartbeat_plausible",
        "silver_recordings.not_from_the_future",
    ]
    assert "Rows failed per expectation per batch" in html
    assert re.search(r"<tr><td>silver_recordings</td><td>device_known</td><td>warn</td>"
                     r"<td>200</td><td>5</td><td>2.5</td></tr>", html)
    assert "<table id='expectations-per-model'><tr><th>model</th>" in html
    plain_html = plain.read_text()
    assert "expectation:" not in plain_html and "Expectations per model" not in plain_html
    assert "Rows failed per expectation" not in plain_html
