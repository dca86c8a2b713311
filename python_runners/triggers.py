"""Triggers as the materialisation hands them over: exactly one of available_now, once, processing_time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

KINDS = ("available_now", "once", "processing_time")


@dataclass(frozen=True)
class Trigger:
    kind: str
    interval: str | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "Trigger":
        chosen = [kind for kind in KINDS if config.get(kind)]
        if len(chosen) != 1 or set(config) - set(KINDS):
            raise ValueError(
                f"trigger {dict(config)!r}: give exactly one of "
                "{'available_now': true}, {'once': true}, {'processing_time': '<n> seconds'}"
            )
        kind = chosen[0]
        return cls(kind, str(config[kind]) if kind == "processing_time" else None)

    @property
    def runs_until_caught_up(self) -> bool:
        """True when the query stops by itself once the data present at its start is processed."""
        return self.kind != "processing_time"

    def catch_up(self) -> "Trigger":
        """The trigger that processes what is there now and stops: the first leg of a served stream."""
        return self if self.runs_until_caught_up else AVAILABLE_NOW

    def writer_kwargs(self) -> dict[str, Any]:
        if self.kind == "available_now":
            return {"availableNow": True}
        if self.kind == "once":
            return {"once": True}
        return {"processingTime": self.interval}


AVAILABLE_NOW = Trigger("available_now")
