"""What the streams are doing, on the terminal: a live table on a terminal, plain lines elsewhere.

On a terminal (rich's Live) one row per stream is redrawn as batches complete: batch id, input
rows, rows per second, batch duration, watermark, and for a model with expectations what they
left out and warned of in the batch (the column is there only while a stream shown has
expectations). Not on a terminal (CI logs, files), each batch is one plain line. At the end of a
run, a summary per model.
"""

from __future__ import annotations

import sys
import threading
from typing import IO, Any, Optional, Sequence

from rich.console import Console
from rich.live import Live
from rich.table import Table

from dbt_spark_streaming.config.expectations import ExpectationCounts, expectations_said
from dbt_spark_streaming.progress.batch import BatchProgress, iso

COLUMNS = ("stream", "batch", "rows in", "rows/s", "batch time", "watermark", "expectations")


def batch_fields(progress: Any) -> tuple[str, str, str, str, str, str, str]:
    """The live table's cells; the expectations' cell is '' for a model without expectations."""
    batch = BatchProgress.from_progress(progress)
    watermark = iso(batch.watermark)
    return (
        batch.label,
        str(batch.batch_id),
        str(batch.input_rows),
        _rate(batch.processed_rows_per_second),
        "-" if batch.duration_ms is None else f"{batch.duration_ms / 1000:.2f} s",
        watermark.replace("T", " ").replace(".000Z", "Z") if watermark else "-",
        expectations_cell(batch.expectations),
    )


def expectations_cell(counts: ExpectationCounts) -> str:
    """'2 dropped and 1 quarantined, warnings: device_known 4': the run summary's words without
    'by expectations', which the column's heading says; '' without expectations."""
    said = expectations_said(counts)
    return said.removeprefix(", ").replace(" by expectations", "", 1)


def _rate(value: Optional[float]) -> str:
    if value is None:  # no time elapsed
        return "-"
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


def batch_line(progress: Any) -> str:
    batch = BatchProgress.from_progress(progress)
    stream, batch_id, rows, rate, duration, watermark, _ = batch_fields(batch)
    line = f"progress {stream} batch {batch_id}: {rows} rows in, {rate} rows/s, {duration}"
    line += f", watermark {watermark}" if watermark != "-" else ""
    return line + expectations_said(batch.expectations)


class LiveProgress:
    """Receives each batch's progress (from any thread) and shows it. A run has one
    (adapter/dbt_spark_streaming/run/streaming_run.py): `with run.display:` the live table is up (on a terminal)
    while the block runs."""

    def __init__(self, out: Optional[IO[str]] = None, live: Optional[bool] = None,
                 width: Optional[int] = None):
        self._out = out  # None: whatever sys.stdout is at the time
        self._live_wanted = live
        self._width = width  # None: the terminal's
        self._latest: dict[str, tuple] = {}
        self._lock = threading.RLock()
        self._live: Optional[Live] = None
        self._showing = 0  # nested or concurrent shows (dbt threads): live while any is open

    def __enter__(self) -> "LiveProgress":
        with self._lock:
            self._showing += 1
            console = Console(file=self._out, width=self._width)
            wanted = console.is_terminal if self._live_wanted is None else self._live_wanted
            if self._showing == 1 and wanted:
                self._latest.clear()
                self._live = Live(self._table(), console=console, refresh_per_second=4,
                                  redirect_stdout=False, redirect_stderr=False)
                self._live.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        with self._lock:
            self._showing -= 1
            if self._showing == 0 and self._live is not None:
                self._live.stop()
                self._live = None

    def stop_live(self) -> None:
        """Take the live table down now, so that a message printed next is not drawn over."""
        with self._lock:
            if self._live is not None:
                self._live.stop()
                self._live = None

    def batch(self, progress: Any) -> None:
        """One batch (a BatchProgress, or what BatchProgress.from_progress reads)."""
        batch = BatchProgress.from_progress(progress)
        fields = batch_fields(batch)
        with self._lock:
            self._latest[fields[0]] = fields
            if self._live is not None:
                self._live.update(self._table())
                return
        print(batch_line(batch), file=self._out or sys.stdout, flush=True)

    def _table(self) -> Table:
        table = Table(title="streams", title_justify="left")
        rows = list(self._latest.values())
        shown = _with_expectations_if_any(COLUMNS, rows)
        for column in COLUMNS[:shown]:
            # the expectations' words wrap, rather than the other cells be cut short
            table.add_column(column, justify="left" if column in ("stream", "watermark", "expectations")
                             else "right", no_wrap=column != "expectations")
        for fields in rows:
            table.add_row(*fields[:shown])
        return table


SUMMARY_COLUMNS = ("model", "batches", "rows in", "rows written", "seconds", "expectations")


def print_summary(summaries: Sequence[Any], out: Optional[IO[str]] = None) -> None:
    """One row per model: batches, rows in, rows written, seconds, and what expectations left out
    and warned of when a model has them (StreamSummary objects)."""
    if not summaries:
        return
    rows = [
        (s.model, str(s.batches), str(s.input_rows), str(s.output_rows), f"{s.seconds:.1f}",
         expectations_cell(s.expectations))
        for s in summaries
    ]
    shown = _with_expectations_if_any(SUMMARY_COLUMNS, rows)
    table = Table(title="streaming models", title_justify="left")
    for column in SUMMARY_COLUMNS[:shown]:
        # on 100 columns the expectations' words wrap, rather than a model's name be cut short
        table.add_column(column, justify="left" if column in ("model", "expectations") else "right",
                         no_wrap=column != "expectations")
    for cells in rows:
        table.add_row(*cells[:shown])
    console = Console(file=out or sys.stdout, width=100)
    console.print(table)


def _with_expectations_if_any(columns: Sequence[str], rows: Sequence[tuple]) -> int:
    """How many of the columns to show: the last, the expectations', only when a row has some, so
    that a run without expectations looks as it did before they existed."""
    return len(columns) if any(cells[-1] for cells in rows) else len(columns) - 1
