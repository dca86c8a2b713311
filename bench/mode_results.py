"""The measured catch-ups of one output mode at one size, summarised per micro-batch."""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median

from bench.catch_up_timing import CatchUp


@dataclass
class ModeResults:
    keys: int
    mode: str
    state_build: CatchUp | None = None  # the unmeasured history catch-up
    measured: list[CatchUp] = field(default_factory=list)

    @property
    def batch_ms(self) -> list[int]:
        return [ms for run in self.measured for ms in run.trigger_execution_ms]

    @property
    def add_batch_ms(self) -> list[int]:
        return [ms for run in self.measured for ms in run.add_batch_ms]

    @property
    def median_batch_ms(self) -> float:
        return median(self.batch_ms)

    @property
    def max_batch_ms(self) -> int:
        return max(self.batch_ms)

    @property
    def median_add_batch_ms(self) -> float:
        return median(self.add_batch_ms)

    @property
    def median_wall_ms(self) -> float:
        return median(run.wall_ms for run in self.measured)

    @property
    def rows_written_per_batch(self) -> float:
        return median(run.rows_written / run.batches for run in self.measured if run.batches)

    @property
    def rows_rewritten_per_batch(self) -> float:
        return median(run.rows_rewritten / run.batches for run in self.measured if run.batches)

    @property
    def unexpected_batch_counts(self) -> list[int]:
        """Catch-ups that did not run exactly one micro-batch (each appended one commit)."""
        return [run.batches for run in self.measured if run.batches != 1]
