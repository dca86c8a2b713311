"""`make report`: the progress table drawn as throughput and batch duration, one series per model."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from python_runners import progress_report, progress_table

MODELS = {"bronze_events": 100, "silver_events": 80, "gold_totals": 60}  # rows per batch
BATCHES = 4


def progress(model: str, batch: int, rows: int, at: datetime) -> dict:
    return {
        "name": f"layer.{model}", "id": f"id-{model}", "runId": f"run-{model}", "batchId": batch,
        "timestamp": at.isoformat().replace("+00:00", "Z"), "numInputRows": rows,
        "processedRowsPerSecond": rows / 0.5, "durationMs": {"addBatch": 400, "triggerExecution": 500 + batch},
    }


def test_the_report_draws_one_series_per_model(spark, monkeypatch, tmp_path):
    monkeypatch.setenv(progress_table.TABLE_VARIABLE, "report_test._stream_progress")
    spark.sql("create schema if not exists report_test")
    start = datetime.now(timezone.utc) - timedelta(minutes=10)
    progress_table.append(spark, [
        progress_table.progress_row(progress(model, batch, rows, start + timedelta(seconds=30 * batch)))
        for model, rows in MODELS.items() for batch in range(BATCHES)
    ])

    assert progress_report.main(["--out", str(tmp_path)]) == 0

    png = (tmp_path / "stream_progress.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
    page = (tmp_path / "stream_progress.html").read_text()
    for panel in ("rate", "duration"):
        assert sorted(re.findall(rf'id="{panel}:([^"]+)"', page)) == sorted(MODELS)
    for model, rows in MODELS.items():
        cells = re.search(rf"<tr><td>{model}</td>(.*?)</tr>", page).group(1)
        values = re.findall(r"<td>([^<]*)</td>", cells)
        # batches, rows in, median batch ms, p95 batch ms, median rows/s
        assert values == [str(BATCHES), str(rows * BATCHES), "501.5", "503", f"{rows / 0.5:.1f}"]


def test_no_progress_table_says_what_to_do(spark, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(progress_table.TABLE_VARIABLE, "report_missing._stream_progress")

    assert progress_report.main(["--out", str(tmp_path)]) == 1

    assert "Run the streaming models first" in capsys.readouterr().err
    assert not (tmp_path / "stream_progress.png").exists()
