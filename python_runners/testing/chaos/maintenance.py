"""Which tables a killed run was maintaining: the service's status file (a served model's state
`maintaining its table`, written every 2 s), if the killed run wrote it (a run killed before its
first write leaves the one of the run before), and any table whose log has a VACUUM begun and
not ended (the kill came while it deleted files)."""

from __future__ import annotations

from typing import Sequence

from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.progress import status_file
from python_runners.testing import delta_log
from python_runners.testing.chaos.stream_state import ModelPaths

MAINTAINING = "maintaining its table"


def maintained_at_kill(lakehouse: Lakehouse, models: Sequence[ModelPaths], run_started: float) -> list[str]:
    """`run_started`: when the killed run started (time.time())."""
    found = set()
    path = status_file.status_path(lakehouse)
    written_by_the_run = path.exists() and path.stat().st_mtime >= run_started
    status = (status_file.read(lakehouse) or {}) if written_by_the_run else {}
    for query in status.get("queries", []):
        if query.get("state") == MAINTAINING:
            found.add(str(query.get("name")))
    for paths in models:
        if delta_log.last_operation(paths.table_path) == "VACUUM START":
            found.add(paths.table)
    return sorted(found)
