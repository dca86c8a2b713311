"""`make report`: throughput and batch duration per model over time, from the progress table.

Writes `stream_progress.png` and `stream_progress.html` (the chart as inline SVG, each model's
series named by its model, and a summary per model) under `<lakehouse>/reports/`. Reads the
table's files by path, in a Spark session of its own without the metastore or the run lock, so
it works while the pipeline or the always-on service runs.
"""

from __future__ import annotations

import argparse
import html
import io
import math
import statistics
import sys
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Optional, Sequence

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from python_runners.runtime.progress import table as progress_table  # noqa: E402
from python_runners.runtime.lakehouse import Lakehouse  # noqa: E402

GAP = timedelta(minutes=2)
COLUMNS = ("model", "batch_timestamp", "num_input_rows", "processed_rows_per_second", "batch_duration_ms")


class NoProgressError(RuntimeError):
    pass


def read_progress(location: str, since_hours: Optional[float] = None) -> list[dict]:
    """The batches in the progress table at `location`, oldest first, times in UTC."""
    from delta.tables import DeltaTable

    spark = _reader_session()
    if not DeltaTable.isDeltaTable(spark, location):
        raise NoProgressError(
            f"No progress table at {location} ({progress_table.table_name()}). Run the streaming "
            f"models first (`make run` or `dbt run`); each run appends its batches."
        )
    frame = spark.read.format("delta").load(location)
    if since_hours is not None:
        since = datetime.now(timezone.utc) - timedelta(hours=since_hours)
        frame = frame.where(frame.batch_timestamp >= since)
    rows = [row.asDict() for row in frame.select(*COLUMNS).orderBy("batch_timestamp").collect()]
    for row in rows:
        # pyspark gives naive datetimes in this process's local zone; the chart is in UTC
        row["batch_timestamp"] = row["batch_timestamp"].astimezone(timezone.utc)
    if not rows:
        raise NoProgressError(
            f"The progress table {progress_table.table_name()} at {location} has no batches"
            f"{f' in the last {since_hours:g} hours' if since_hours else ''}. Run the streaming "
            f"models (`dbt run`) and try again."
        )
    return rows


def _reader_session():
    """A session that reads Delta files: no Hive metastore (Derby admits one process) and no
    lakehouse lock (reading does not conflict with the running pipeline)."""
    from pyspark.sql import SparkSession

    from python_runners.runtime.session import session_conf

    conf = session_conf(Lakehouse.from_env(), "local[1]")
    for key in ("spark.sql.catalogImplementation", "spark.hadoop.javax.jdo.option.ConnectionURL"):
        conf.pop(key)
    conf["spark.app.name"] = "stream-progress-report"
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def series_by_model(rows: Sequence[dict]) -> dict[str, list[dict]]:
    by_model: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_model[row["model"]].append(row)
    return dict(sorted(by_model.items()))


def rows_per_second(row: dict) -> float:
    """Spark's processed rate; from rows and duration when Spark had none (no time elapsed)."""
    rate = row.get("processed_rows_per_second")
    if rate is not None:
        return float(rate)
    duration = row.get("batch_duration_ms") or 0
    return 1000.0 * (row.get("num_input_rows") or 0) / duration if duration else 0.0


def chart(rows: Sequence[dict]) -> Figure:
    """Two panels over time, one line per model in each: rows per second, batch duration."""
    figure, (rate_axis, duration_axis) = plt.subplots(2, 1, sharex=True, figsize=(11, 7))
    for model, batches in series_by_model(rows).items():
        times, rates, durations = [], [], []
        for previous, batch in zip([None, *batches], batches):
            if previous and batch["batch_timestamp"] - previous["batch_timestamp"] > GAP:
                # the stream did not run in between (separate runs): no line across the gap
                times.append(previous["batch_timestamp"] + GAP / 2)
                rates.append(float("nan"))
                durations.append(float("nan"))
            times.append(batch["batch_timestamp"])
            rates.append(rows_per_second(batch))
            durations.append(batch["batch_duration_ms"] / 1000)
        rate_axis.plot(times, rates, marker=".", label=model, gid=f"rate:{model}")
        duration_axis.plot(times, durations, marker=".", label=model, gid=f"duration:{model}")
    rate_axis.set_ylabel("rows per second")
    rate_axis.set_title("Stream throughput and batch duration per model")
    duration_axis.set_ylabel("batch duration (s)")
    duration_axis.set_xlabel("batch start (UTC)")
    for axis in (rate_axis, duration_axis):
        axis.grid(True, alpha=0.3)
    rate_axis.legend(loc="upper left", fontsize="small", ncol=2)
    figure.autofmt_xdate()
    figure.tight_layout()
    return figure


def summary(rows: Sequence[dict]) -> list[dict]:
    result = []
    for model, batches in series_by_model(rows).items():
        durations = sorted(b["batch_duration_ms"] for b in batches)
        result.append({
            "model": model,
            "batches": len(batches),
            "rows_in": sum(b["num_input_rows"] for b in batches),
            "median_batch_ms": statistics.median(durations),
            "p95_batch_ms": durations[math.ceil(0.95 * len(durations)) - 1],  # nearest rank
            "median_rows_per_second": round(statistics.median(rows_per_second(b) for b in batches), 1),
        })
    return result


def write_report(rows: Sequence[dict], out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    figure = chart(rows)
    png = out / "stream_progress.png"
    figure.savefig(png, dpi=110)
    svg = io.StringIO()
    figure.savefig(svg, format="svg")
    plt.close(figure)
    page = out / "stream_progress.html"
    page.write_text(_html(svg.getvalue(), summary(rows)), encoding="utf-8")
    return png, page


def _html(svg: str, models: list[dict]) -> str:
    header = "".join(f"<th>{html.escape(k.replace('_', ' '))}</th>" for k in models[0])
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in model.values()) + "</tr>"
        for model in models
    )
    svg = svg[svg.index("<svg"):]  # drop the XML prolog: the SVG sits inside the page
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Stream progress</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
        "td:first-child,th:first-child{text-align:left}</style></head><body>"
        f"<h1>Stream progress</h1>{svg}<h2>Per model</h2>"
        f"<table><tr>{header}</tr>{body}</table></body></html>"
    )


def main(argv: Optional[Sequence[str]] = None) -> int:
    lakehouse = Lakehouse.from_env()
    parser = argparse.ArgumentParser(prog="python -m python_runners report")
    parser.add_argument("--out", default=f"{lakehouse.root}/reports", help="folder for the PNG and HTML")
    parser.add_argument("--since-hours", type=float, default=None, help="only batches this recent")
    args = parser.parse_args(argv)
    try:
        rows = read_progress(progress_table.table_location(lakehouse), args.since_hours)
    except NoProgressError as error:
        print(error, file=sys.stderr)
        return 1
    png, page = write_report(rows, Path(args.out))
    models = len(series_by_model(rows))
    print(f"Wrote {png} and {page}: {len(rows)} batches of {models} models.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
