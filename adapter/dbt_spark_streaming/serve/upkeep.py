"""When the service maintains a served model's table (lifecycle/maintenance.py does the work).

The dataflow scheduler (serve/dataflow.py) treats a table's maintenance as one more job for its
run slots, with a deadline like a model's: it runs at once when the slots are idle, and with
models waiting it takes its turn by earliest deadline, so it is neither starved by a steady
stream of landings nor run ahead of a wave that came first. It never runs beside its own model's
run (OPTIMIZE and VACUUM against its own writer would conflict, or hold it).

A pass is due every `compact_at // 4` runs of the model (a run writes a file or two: is the table
at `compact_at` live files? so it holds at most about half as many again) and every `VACUUM_EVERY_SECONDS` (VACUUM, with its guards, which
reads every checkpoint's position).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Optional

from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.lifecycle.maintenance import COMPACT_AT_FILES, Upkeep

VACUUM_EVERY_SECONDS = 600.0
# How long a due pass may wait behind runs with earlier deadlines (a model without a target_lag
# has the same slack).
SLACK_SECONDS = 60.0
COMPACT_AT_VARIABLE = "STREAM_SERVE_COMPACT_AT_FILES"
# A pass that failed (its error said on the terminal) is tried again after this long.
RETRY_SECONDS = 300.0


def compact_at() -> int:
    value = os.environ.get(COMPACT_AT_VARIABLE, "")
    if value.isdigit() and int(value) > 1:
        return int(value)
    if value:
        raise StreamingModelError(f"{COMPACT_AT_VARIABLE} is {value!r}; give the number of live "
                                  f"files a served table is compacted at, e.g. {COMPACT_AT_FILES}.")
    return COMPACT_AT_FILES


@dataclass
class UpkeepSchedule:
    """One served table's maintenance: when it is due, and what the last pass did."""

    upkeep: Upkeep
    check_every_runs: int = COMPACT_AT_FILES // 4
    runs_since: int = 0
    vacuum_at: float = field(default_factory=lambda: time.monotonic() + VACUUM_EVERY_SECONDS)
    retry_at: float = 0.0
    due_since: Optional[float] = None  # time.time(), as the models' pending_since
    vacuum_due: bool = False
    passes: int = 0
    last: str = ""

    def ran(self) -> None:
        self.runs_since += 1

    def due(self, now: float) -> bool:
        """Whether a pass should run; marks since when."""
        monotonic = time.monotonic()
        if monotonic < self.retry_at:
            return False
        self.vacuum_due = self.vacuum_due or monotonic >= self.vacuum_at
        if self.runs_since >= self.check_every_runs or self.vacuum_due:
            self.due_since = self.due_since or now
            return True
        return False

    def deadline(self) -> float:
        return (self.due_since or 0.0) + SLACK_SECONDS

    def started(self) -> bool:
        """The pass begins: returns whether it includes VACUUM."""
        vacuum, self.vacuum_due, self.runs_since, self.due_since = self.vacuum_due, False, 0, None
        if vacuum:
            self.vacuum_at = time.monotonic() + VACUUM_EVERY_SECONDS
        return vacuum

    def failed(self) -> None:
        self.retry_at = time.monotonic() + RETRY_SECONDS
