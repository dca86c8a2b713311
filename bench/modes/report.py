"""Section 5: the printed table, the update_over_complete figures and its part of docs/BENCHMARKS.md."""

from __future__ import annotations

from bench.harness.doc import NOT_RUN, table as doc_table
from bench.harness.stats import size_label
from bench.modes.mode_results import ModeResults

COLUMNS = (
    ("shape", 8), ("keys", 9), ("mode", 11), ("batches", 8), ("median ms", 10), ("max ms", 8),
    ("addBatch ms", 12), ("wall ms", 8), ("rows written/batch", 19), ("rows in files/batch", 20),
    ("rows read/batch", 16), ("files touched/batch", 20), ("files in table", 15),
    ("state build ms", 15),
)


def _row(values) -> str:
    return "  ".join(str(value).rjust(width) for value, (_, width) in zip(values, COLUMNS))


def table(results: list[ModeResults]) -> str:
    lines = [_row(name for name, _ in COLUMNS), _row("-" * width for _, width in COLUMNS)]
    for result in results:
        lines.append(_row([
            result.shape,
            result.keys,
            result.mode,
            len(result.batch_ms),
            f"{result.median_batch_ms:.0f}",
            result.max_batch_ms,
            f"{result.median_add_batch_ms:.0f}",
            f"{result.median_wall_ms:.0f}",
            f"{result.rows_written_per_batch:.0f}",
            f"{result.rows_rewritten_per_batch:.0f}",
            "-" if result.rows_read_per_batch is None else f"{result.rows_read_per_batch:.0f}",
            f"{result.files_touched_per_batch:.0f}",
            result.table_files,
            result.state_build_ms if result.state_build else "-",
        ]))
    return "\n".join(lines)


def update_over_complete(results: list[ModeResults], mode: str = "update") -> dict[str, float]:
    """Per shape and key count (update_over_complete_<keys>_<shape>): complete mode's median
    batch time over `mode`'s; above 1 means `mode` is faster."""
    by_size: dict[tuple[str, int], dict[str, ModeResults]] = {}
    for result in results:
        by_size.setdefault((result.shape, result.keys), {})[result.mode] = result
    suffix = "" if mode == "update" else f"_{mode.removeprefix('update_')}"
    return {
        f"update_over_complete{suffix}_{size_label(keys)}_{shape}":
            modes["complete"].median_batch_ms / modes[mode].median_batch_ms
        for (shape, keys), modes in by_size.items() if mode in modes and "complete" in modes
    }


def summary_lines(results: list[ModeResults]) -> list[str]:
    modes = sorted({result.mode for result in results if result.mode.startswith("update")})
    return [
        "bench update_vs_complete: " + " ".join(f"{name}={ratio:.2f}" for name, ratio in figures.items())
        for mode in modes for figures in [update_over_complete(results, mode)] if figures
    ]


def modes_section(result: dict | list[dict] | None, run: dict | None = None) -> list[str]:
    lines = ["## 5. Output mode update vs complete", ""]
    if result is None:
        return lines + [NOT_RUN, ""]
    rows = result["rows"] if isinstance(result, dict) else result  # a list: before batch shapes
    if run:
        lines += [f"Run: {run['started_at']} (UTC), with `{run['command']}`.", ""]
    lines += [
        "`bench/modes/` (`python -m bench.modes`, also `make bench-modes`): an aggregate after history "
        "batches holding every key; each measured batch touches 1% of the keys, at random "
        "(shape random) or in the latest time windows (shape windows). Time per micro-batch "
        "(progress durationMs.triggerExecution), median:", "",
    ]
    lines += doc_table(
        ["shape", "keys", "mode", "batches", "median ms", "max ms", "rows written/batch",
         "rows in files/batch", "files touched/batch"],
        [[row.get("shape", "random"), f"{row['keys']:,}", row["mode"], row["batches"],
          f"{row['median_batch_ms']:.0f}", row["max_batch_ms"], f"{row['rows_written_per_batch']:,.0f}",
          f"{row['rows_in_files_per_batch']:,.0f}",
          f"{row['files_touched_per_batch']:.0f} of {row['table_files']}" if "table_files" in row else "-"]
         for row in rows],
    )
    if isinstance(result, dict):
        figures = [f"`{name}` = {value:.2f}" for name, value in result.items() if name != "rows"]
        lines += ["", "update_over_complete (complete's median ms / update's): " + ", ".join(figures)]
    return lines + [""]
