"""What every write of a model holds: its checked config and the table it writes."""

from __future__ import annotations

from dataclasses import dataclass

from dbt_spark_streaming.config.model import ModelConfig


@dataclass(frozen=True)
class TableWrite:
    config: ModelConfig
    target_table: str

    @property
    def model(self) -> str:
        return self.config.model

    @property
    def checkpoint(self) -> str:
        """Where the write's progress lives: its checkpoint, or a copy_into model's load log."""
        return self.config.checkpoint

    @property
    def quarantine_table(self) -> str | None:
        return self.config.expectations.quarantine_table(self.target_table)
