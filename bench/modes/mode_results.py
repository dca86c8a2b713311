"""The measured catch-ups of one output mode at one size, summarised per micro-batch."""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median
from typing import Optional

from bench.harness.catch_up import CatchUp


@dataclass
class ModeResults:
    shape: str
    keys: int
    mode: str
    state_build: list[CatchUp] = field(default_factory=list)  # the unmeasured history catch-ups
    measured: list[CatchUp] = field(default_factory=list)

    @property
    def state_build_ms(self) -> int:
        return sum(ms for run in self.state_build for ms in run.trigger_execution_ms)

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
    def files_touched_per_batch(self) -> float:
        return median(run.files_touched / run.batches for run in self.measured if run.batches)

    @property
    def rows_read_per_batch(self) -> Optional[float]:
        read = [run.rows_read / run.batches for run in self.measured if run.batches and run.rows_read is not None]
        return median(read) if read else None

    @property
    def table_files(self) -> int:
        """Data files in the table after the last measured batch."""
        return self.measured[-1].table_files

    @property
    def unexpected_batch_counts(self) -> list[int]:
        """Catch-ups that did not run exactly one micro-batch (each appended one commit)."""
        return [run.batches for run in self.measured if run.batches != 1]
