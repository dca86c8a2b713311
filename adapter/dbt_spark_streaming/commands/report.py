"""`dbt-spark-streaming report [--since-hours H]`: throughput and batch duration per model over
time, from the progress table of the profile target's lakehouse (commands/project.py).

When any model has expectations, a third panel: the rows each expectation failed, per batch.
Writes `stream_progress.png` and `stream_progress.html` (the chart as inline SVG, each model's
series named by its model, a summary per model and, with expectations, their totals per model
and per expectation) under `<lakehouse>/reports/`. Reads the
table's files by path, in a Spark session of its own without the metastore or the run lock, so
it works while the pipeline or the always-on service runs. The charts need matplotlib, which the
package installs only with its `report` extra.
"""

from __future__ import annotations

import argparse
import html
import io
import math
import os
import statistics
import sys
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Optional, Sequence

from dbt_spark_streaming.commands import project
from dbt_spark_streaming.commands.project import DbtOptions
from dbt_spark_streaming.lakehouse import Lakehouse

if TYPE_CHECKING:
    from matplotlib.figure import Figure

HELP = "throughput and batch duration per model over time, a PNG and an HTML page (needs matplotlib)"
MISSING_MATPLOTLIB = ("dbt-spark-streaming report draws its charts with matplotlib, which is not installed: "
                      "pip install 'dbt-spark-streaming[report]'")
GAP = timedelta(minutes=2)
COLUMNS = ("model", "batch_timestamp", "num_input_rows", "processed_rows_per_second", "batch_duration_ms")
# A progress table from before expectations existed lacks these; its rows read them as None.
EXPECTATION_COLUMNS = ("rows_checked_by_expectations", "rows_dropped_by_expectations",
                       "rows_quarantined_by_expectations", "expectations")


class NoProgressError(RuntimeError):
    pass


def pyplot():
    """matplotlib's pyplot, drawing into files only; SystemExit saying how to install it when
    it is not installed."""
    try:
        import matplotlib
    except ImportError:
        raise SystemExit(MISSING_MATPLOTLIB) from None
    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def progress_table_name(target: project.ProfileTarget, environ: Mapping[str, str] = os.environ) -> str:
    """The table `dbt run` of the target records its batches in (connections.py
    use_progress_table_of): STREAM_PROGRESS_TABLE, else the target schema's _stream_progress."""
    from dbt_spark_streaming.progress.table import TABLE_VARIABLE

    return environ.get(TABLE_VARIABLE) or f"{target.schema}._stream_progress"


def read_progress(location: str, since_hours: Optional[float] = None, lakehouse: Optional[Lakehouse] = None,
                  table: Optional[str] = None) -> list[dict]:
    """The batches in the progress table at `location`, oldest first, times in UTC."""
    from delta.tables import DeltaTable

    from dbt_spark_streaming.progress import table as progress_table

    table = table or progress_table.table_name()
    spark = _reader_session(lakehouse or Lakehouse.from_env())
    if not DeltaTable.isDeltaTable(spark, location):
        raise NoProgressError(
            f"No progress table at {location} ({table}). Run the streaming models first "
            f"(`dbt run` or `dbt-spark-streaming serve`); each run appends its batches."
        )
    frame = spark.read.format("delta").load(location)
    if "up_to_date" in frame.columns:  # runs of a model that had nothing new: no batch
        frame = frame.where("up_to_date is not true")
    if since_hours is not None:
        since = datetime.now(timezone.utc) - timedelta(hours=since_hours)
        frame = frame.where(frame.batch_timestamp >= since)
    present = [column for column in (*COLUMNS, *EXPECTATION_COLUMNS) if column in frame.columns]
    selected = frame.select(*present).orderBy("batch_timestamp").collect()
    rows = [{**dict.fromkeys(EXPECTATION_COLUMNS), **row.asDict(recursive=True)} for row in selected]
    for row in rows:
        # pyspark gives naive datetimes in this process's local zone; the chart is in UTC
        row["batch_timestamp"] = row["batch_timestamp"].astimezone(timezone.utc)
    if not rows:
        raise NoProgressError(
            f"The progress table {table} at {location} has no batches"
            f"{f' in the last {since_hours:g} hours' if since_hours else ''}. Run the streaming "
            f"models (`dbt run`) and try again."
        )
    return rows


def _reader_session(lakehouse: Lakehouse):
    """A session that reads Delta files: no Hive metastore (Derby admits one process) and no
    lakehouse lock (reading does not conflict with the running pipeline)."""
    from pyspark.sql import SparkSession

    from dbt_spark_streaming.session import session_conf

    conf = session_conf(lakehouse, "local[1]")
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


def over_time(batches: Sequence[dict], value: Callable[[dict], float]) -> tuple[list, list]:
    """A series' times and values, with a break where the stream did not run in between
    (separate runs), so that no line is drawn across the gap."""
    times, values = [], []
    for previous, batch in zip([None, *batches], batches):
        if previous and batch["batch_timestamp"] - previous["batch_timestamp"] > GAP:
            times.append(previous["batch_timestamp"] + GAP / 2)
            values.append(float("nan"))
        times.append(batch["batch_timestamp"])
        values.append(value(batch))
    return times, values


def checked(batches: Sequence[dict]) -> list[dict]:
    """The batches whose rows expectations checked (the model had them then)."""
    return [batch for batch in batches if batch.get("expectations") is not None]


def expectations_by_model(rows: Sequence[dict]) -> dict[str, list[tuple[str, str]]]:
    """Each model with expectations: its expectations' (name, action), in the order first seen."""
    found: dict[str, dict[tuple[str, str], None]] = defaultdict(dict)
    for row in rows:
        for rule in row.get("expectations") or []:
            found[row["model"]][(rule["name"], rule["action"])] = None
    return {model: list(rules) for model, rules in sorted(found.items())}


def rows_failed(batch: dict, name: str) -> float:
    """The rows the expectation failed in the batch; NaN when the batch did not check it."""
    for rule in batch["expectations"]:
        if rule["name"] == name:
            return float(rule["rows_failed"])
    return float("nan")


def chart(rows: Sequence[dict]) -> "Figure":
    """Panels over time, one line per model in each: rows per second, batch duration; when any
    model has expectations, the rows each of them failed per batch."""
    plt = pyplot()
    expectations = expectations_by_model(rows)
    panels = 3 if expectations else 2
    figure, axes = plt.subplots(panels, 1, sharex=True, figsize=(11, 3.5 * panels))
    rate_axis, duration_axis = axes[0], axes[1]
    by_model = series_by_model(rows)
    for model, batches in by_model.items():
        rate_axis.plot(*over_time(batches, rows_per_second), marker=".", label=model,
                       gid=f"rate:{model}")
        duration_axis.plot(*over_time(batches, lambda batch: batch["batch_duration_ms"] / 1000),
                           marker=".", label=model, gid=f"duration:{model}")
    rate_axis.set_ylabel("rows per second")
    rate_axis.set_title("Stream throughput and batch duration per model")
    duration_axis.set_ylabel("batch duration (s)")
    if expectations:
        failed_axis = axes[2]
        for model, rules in expectations.items():
            batches = checked(by_model[model])
            for name, action in rules:
                failed_axis.plot(*over_time(batches, partial(rows_failed, name=name)),
                                 marker=".", label=f"{model}: {name} ({action})",
                                 gid=f"expectation:{model}.{name}")
        failed_axis.set_ylabel("rows failed")
        failed_axis.set_title("Rows failed per expectation per batch", fontsize="medium")
        failed_axis.legend(loc="best", fontsize="small", ncol=2)
    axes[-1].set_xlabel("batch start (UTC)")
    for axis in axes:
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


def expectation_totals_per_model(rows: Sequence[dict]) -> list[dict]:
    """Per model with expectations: rows checked, and left out by drop and quarantine rules."""
    result = []
    for model, batches in series_by_model(rows).items():
        batches = checked(batches)
        if batches:
            result.append({
                "model": model,
                "batches": len(batches),
                "rows_checked": sum(b.get("rows_checked_by_expectations") or 0 for b in batches),
                "rows_dropped": sum(b.get("rows_dropped_by_expectations") or 0 for b in batches),
                "rows_quarantined": sum(b.get("rows_quarantined_by_expectations") or 0 for b in batches),
            })
    return result


def expectation_totals(rows: Sequence[dict]) -> list[dict]:
    """Per expectation of each model: the rows it checked and failed over the batches."""
    by_model = series_by_model(rows)
    result = []
    for model, rules in expectations_by_model(rows).items():
        for name, action in rules:
            outcomes = [rule for batch in checked(by_model[model]) for rule in batch["expectations"]
                        if (rule["name"], rule["action"]) == (name, action)]
            rows_checked = sum(rule["rows_checked"] or 0 for rule in outcomes)
            failed = sum(rule["rows_failed"] or 0 for rule in outcomes)
            result.append({
                "model": model,
                "expectation": name,
                "action": action,
                "rows_checked": rows_checked,
                "rows_failed": failed,
                "failed_%": round(100 * failed / rows_checked, 2) if rows_checked else "-",
            })
    return result


def write_report(rows: Sequence[dict], out: Path) -> tuple[Path, Path]:
    plt = pyplot()
    out.mkdir(parents=True, exist_ok=True)
    figure = chart(rows)
    png = out / "stream_progress.png"
    figure.savefig(png, dpi=110)
    svg = io.StringIO()
    figure.savefig(svg, format="svg")
    plt.close(figure)
    page = out / "stream_progress.html"
    page.write_text(_html(svg.getvalue(), summary(rows), expectation_totals_per_model(rows),
                          expectation_totals(rows)), encoding="utf-8")
    return png, page


def _html(svg: str, models: list[dict], checked_models: list[dict], expectations: list[dict]) -> str:
    svg = svg[svg.index("<svg"):]  # drop the XML prolog: the SVG sits inside the page
    sections = f"<h2>Per model</h2>{_table(models)}"
    if expectations:
        sections += (f"<h2>Expectations per model</h2>{_table(checked_models, 'expectations-per-model')}"
                     f"<h2>Per expectation</h2>{_table(expectations, 'expectations')}")
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Stream progress</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
        "td:first-child,th:first-child{text-align:left}</style></head><body>"
        f"<h1>Stream progress</h1>{svg}{sections}</body></html>"
    )


def _table(records: list[dict], table_id: Optional[str] = None) -> str:
    header = "".join(f"<th>{html.escape(key.replace('_', ' '))}</th>" for key in records[0])
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(value))}</td>" for value in record.values()) + "</tr>"
        for record in records
    )
    opening = f"<table id='{table_id}'>" if table_id else "<table>"
    return f"{opening}<tr>{header}</tr>{body}</table>"


def parser(prog: str = "dbt-spark-streaming report") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=HELP)
    parser.add_argument("--out", default=None, help="folder for the PNG and HTML (default: <lakehouse>/reports)")
    parser.add_argument("--since-hours", type=float, default=None, help="only batches this recent")
    project.add_dbt_options(parser)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    pyplot()  # before Spark starts: without matplotlib there is nothing to draw with
    from dbt_spark_streaming.progress import table as progress_table

    options = DbtOptions.from_args(args)
    found = project.found_or_said(options)
    if found is None:
        return 2
    target, lakehouse = found
    table = progress_table_name(target)
    try:
        rows = read_progress(progress_table.table_location(lakehouse, table), args.since_hours, lakehouse, table)
    except NoProgressError as error:
        print(error, file=sys.stderr)
        return 1
    png, page = write_report(rows, Path(args.out or f"{lakehouse.root}/reports"))
    models = len(series_by_model(rows))
    print(f"Wrote {png} and {page}: {len(rows)} batches of {models} models.")
    return 0
