"""Files landing in a lakehouse's landing folder, as a careful uploader writes them.

Each file is written under a hidden name first and then renamed into place, so a stream never
sees half a file (Spark's file source skips names starting with '.' or '_'). No Spark here: the
demo, the tests, the chaos run and the benchmarks land files from processes without one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable, Mapping

from dbt_spark_streaming.lakehouse import Lakehouse


def landing_folder(lakehouse: Lakehouse, path: str) -> Path:
    """The folder of a source's meta.stream.path (relative paths under the landing folder), created."""
    folder = Path(lakehouse.landing_path(path))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def land_text(folder: Path, name: str, text: str, modified: float | None = None) -> Path:
    """`folder/name` holding `text`, renamed into place whole. `modified`: the file's modification
    time (epoch seconds), which orders the files Spark's file source takes oldest first."""
    folder.mkdir(parents=True, exist_ok=True)
    hidden = folder / f".{name}.tmp"
    hidden.write_text(text, encoding="utf-8")
    if modified is not None:
        os.utime(hidden, (modified, modified))
    landed = folder / name
    os.replace(hidden, landed)
    return landed


def land_json_lines(
    folder: Path, name: str, rows: Iterable[Mapping], modified: float | None = None
) -> Path:
    """`folder/name` with one JSON object a line, renamed into place whole."""
    return land_text(folder, name, json_lines(rows), modified)


def json_lines(rows: Iterable[Mapping]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)
