"""The benchmark's printed table and its update_over_complete figures."""

from __future__ import annotations

from bench.mode_results import ModeResults

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


def key_label(keys: int) -> str:
    """10000 -> 10k, 1000000 -> 1M: the suffix of a figure's name."""
    for size, suffix in ((1_000_000, "M"), (1_000, "k")):
        if keys >= size and keys % size == 0:
            return f"{keys // size}{suffix}"
    return str(keys)


def update_over_complete(results: list[ModeResults], mode: str = "update") -> dict[str, float]:
    """Per shape and key count (update_over_complete_<keys>_<shape>): complete mode's median
    batch time over `mode`'s; above 1 means `mode` is faster."""
    by_size: dict[tuple[str, int], dict[str, ModeResults]] = {}
    for result in results:
        by_size.setdefault((result.shape, result.keys), {})[result.mode] = result
    suffix = "" if mode == "update" else f"_{mode.removeprefix('update_')}"
    return {
        f"update_over_complete{suffix}_{key_label(keys)}_{shape}":
            modes["complete"].median_batch_ms / modes[mode].median_batch_ms
        for (shape, keys), modes in by_size.items() if mode in modes and "complete" in modes
    }


def summary_lines(results: list[ModeResults]) -> list[str]:
    modes = sorted({result.mode for result in results if result.mode.startswith("update")})
    return [
        "bench update_vs_complete: " + " ".join(f"{name}={ratio:.2f}" for name, ratio in figures.items())
        for mode in modes for figures in [update_over_complete(results, mode)] if figures
    ]


def minutes_and_seconds(seconds: float) -> str:
    return f"{int(seconds // 60)}m{seconds % 60:04.1f}s"
