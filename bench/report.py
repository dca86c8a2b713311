"""The benchmark's printed table and one-line summary."""

from __future__ import annotations

from bench.mode_results import ModeResults

COLUMNS = (
    ("keys", 9), ("mode", 9), ("batches", 8), ("median ms", 10), ("max ms", 8),
    ("addBatch ms", 12), ("wall ms", 8), ("rows written/batch", 19), ("rows in files/batch", 20),
    ("state build ms", 15),
)


def _row(values) -> str:
    return "  ".join(str(value).rjust(width) for value, (_, width) in zip(values, COLUMNS))


def table(results: list[ModeResults]) -> str:
    lines = [_row(name for name, _ in COLUMNS), _row("-" * width for _, width in COLUMNS)]
    for result in results:
        lines.append(_row([
            result.keys,
            result.mode,
            len(result.batch_ms),
            f"{result.median_batch_ms:.0f}",
            result.max_batch_ms,
            f"{result.median_add_batch_ms:.0f}",
            f"{result.median_wall_ms:.0f}",
            f"{result.rows_written_per_batch:.0f}",
            f"{result.rows_rewritten_per_batch:.0f}",
            sum(result.state_build.trigger_execution_ms) if result.state_build else "-",
        ]))
    return "\n".join(lines)


def complete_over(results: list[ModeResults], mode: str) -> dict[int, float]:
    """Per key count: median complete-mode batch time over the median batch time of `mode`."""
    by_size: dict[int, dict[str, ModeResults]] = {}
    for result in results:
        by_size.setdefault(result.keys, {})[result.mode] = result
    return {
        keys: modes["complete"].median_batch_ms / modes[mode].median_batch_ms
        for keys, modes in by_size.items() if mode in modes
    }


def summary_lines(results: list[ModeResults]) -> list[str]:
    lines = ["bench update_vs_complete: " + " ".join(
        f"keys={keys} complete_over_update={ratio:.2f}"
        for keys, ratio in complete_over(results, "update").items()
    )]
    with_deletion_vectors = complete_over(results, "update_dv")
    if with_deletion_vectors:
        lines.append("bench update_vs_complete (update with deletion vectors): " + " ".join(
            f"keys={keys} complete_over_update_dv={ratio:.2f}"
            for keys, ratio in with_deletion_vectors.items()
        ))
    return lines


def minutes_and_seconds(seconds: float) -> str:
    return f"{int(seconds // 60)}m{seconds % 60:04.1f}s"
