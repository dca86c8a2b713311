"""What Spark keeps in each streaming checkpoint, counted as files: does it stay bounded?

Spark keeps the last `spark.sql.streaming.minBatchesToRetain` (100) batches of a checkpoint's
`offsets/` and `commits/` logs and of its state store's versions, and compacts a file source's
log of files taken every 10 batches. The soak counts them at its end, so a run of thousands of
batches shows whether they hold.

    python -m bench.latency.checkpoint_sizes <checkpoint root>
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

LOGS = ("offsets", "commits")


def checkpoints(root: Path) -> list[Path]:
    found = []
    for folder, subfolders, _files in os.walk(root):
        if "offsets" in subfolders:
            found.append(Path(folder))
            subfolders.clear()
    return sorted(found)


def sizes(checkpoint: Path) -> dict[str, int]:
    """Entries of its offsets and commits logs, files of its state store and of its sources' logs."""
    figures = {log: _entries(checkpoint / log) for log in LOGS}
    figures["state_files"] = _files_under(checkpoint / "state")
    figures["source_log_files"] = _files_under(checkpoint / "sources")
    return figures


def _entries(folder: Path) -> int:
    try:
        return sum(1 for name in os.listdir(folder) if name.isdigit())
    except FileNotFoundError:
        return 0


def _files_under(folder: Path) -> int:
    return sum(len([name for name in files if not name.startswith(".")]) for _folder, _dirs, files in os.walk(folder))


def main(argv: list[str] | None = None) -> int:
    root = Path((argv or sys.argv[1:])[0])
    for checkpoint in checkpoints(root):
        figures = sizes(checkpoint)
        print(f"{checkpoint.relative_to(root)}: " + ", ".join(f"{key} {value}" for key, value in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
