"""When the service maintains a served model's table (lifecycle/maintenance.py does the work).

The dataflow scheduler (serve/dataflow.py) treats a table's maintenance as one more job for its
run slots, with a deadline like a model's: it runs at once when the slots are idle, and with
models waiting it takes its turn by earliest deadline, so it is neither starved by a steady
stream of landings nor run ahead of a wave that came first. It never runs beside its own model's
run (OPTIMIZE and VACUUM against its own writer would conflict, or hold it).

A pass is due every `compact_at // 4` runs of the model (a run writes a file or two: is the table
at `compact_at` live files? so it holds at most about half as many again), and VACUUM (with its
guards, which read every checkpoint's position) every `VACUUM_EVERY_SECONDS` while the table has
files left to delete: until it has gone unwritten for its VACUUM retention and one more interval.
A served lakehouse with nothing landing pays for no pass.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Optional

from dbt_spark_streaming.lifecycle.maintenance import COMPACT_AT_FILES, Upkeep
from dbt_spark_streaming.serve.environment import whole_number

VACUUM_EVERY_SECONDS = 600.0
# How long a due pass may wait behind runs with earlier deadlines (a model without a target_lag
# has the same slack).
SLACK_SECONDS = 60.0
COMPACT_AT_VARIABLE = "STREAM_SERVE_COMPACT_AT_FILES"
VACUUM_EVERY_VARIABLE = "STREAM_SERVE_VACUUM_EVERY_SECONDS"
# A pass that failed (its error said on the terminal) is tried again after this long.
RETRY_SECONDS = 300.0


def compact_at() -> int:
    return whole_number(COMPACT_AT_VARIABLE, COMPACT_AT_FILES, 2, "the number of live files a served "
                         "table is compacted at")


def vacuum_every_seconds() -> float:
    return float(whole_number(VACUUM_EVERY_VARIABLE, int(VACUUM_EVERY_SECONDS), 1, "how many seconds "
                               "apart a served table is vacuumed"))


@dataclass
class UpkeepSchedule:
    """One served table's maintenance: when it is due, and what the last pass did."""

    upkeep: Upkeep
    check_every_runs: int = COMPACT_AT_FILES // 4
    vacuum_every: float = VACUUM_EVERY_SECONDS
    runs_since: int = 0
    vacuum_at: float = 0.0
    written_at: float = float("-inf")  # time.monotonic() of its model's last run
    retry_at: float = 0.0
    due_since: Optional[float] = None  # time.time(), as the models' pending_since
    vacuum_due: bool = False
    passes: int = 0
    last: str = ""

    def __post_init__(self) -> None:
        self.vacuum_at = self.vacuum_at or time.monotonic() + self.vacuum_every

    def ran(self) -> None:
        self.runs_since += 1
        self.written_at = time.monotonic()

    def due(self, now: float) -> bool:
        """Whether a pass should run; marks since when."""
        monotonic = time.monotonic()
        if monotonic < self.retry_at:
            return False
        self.vacuum_due = self.vacuum_due or (monotonic >= self.vacuum_at and self._files_left(monotonic))
        if self.runs_since >= self.check_every_runs or self.vacuum_due:
            self.due_since = self.due_since or now
            return True
        return False

    def _files_left(self, monotonic: float) -> bool:
        """Whether the table may hold files a VACUUM would delete: it was written within its
        retention (whole hours, as VACUUM counts it) and one interval more."""
        retention = math.ceil(self.upkeep.maintenance.file_retention_seconds / 3600) * 3600
        return monotonic - self.written_at <= retention + self.vacuum_every

    def deadline(self) -> float:
        return (self.due_since or 0.0) + SLACK_SECONDS

    def started(self) -> bool:
        """The pass begins: returns whether it includes VACUUM."""
        vacuum, self.vacuum_due, self.runs_since, self.due_since = self.vacuum_due, False, 0, None
        if vacuum:
            self.vacuum_at = time.monotonic() + self.vacuum_every
        return vacuum

    def failed(self) -> None:
        self.retry_at = time.monotonic() + RETRY_SECONDS
