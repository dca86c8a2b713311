"""Triggers as the materialisation hands them over: exactly one of available_now, once,
processing_time, on_new_data.

`on_new_data` is the always-on form that costs nothing while nothing lands: the model catches up
like `available_now`, then the serving loop (serve/dataflow.py) runs it again, as an
`available_now` query from the same checkpoint, each time one of its inputs commits something
new: a file in its landing folder, a new version of an upstream Delta table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from dbt_spark_streaming.config.intervals import is_interval

KINDS = ("available_now", "once", "processing_time", "on_new_data")
FLAG_KINDS = ("available_now", "once", "on_new_data")  # written as a bare word or `<kind>: true`


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
                "{'available_now': true}, {'once': true}, {'processing_time': '<n> seconds'}, "
                "{'on_new_data': true}"
            )
        kind = chosen[0]
        return cls(kind, str(config[kind]) if kind == "processing_time" else None)

    @classmethod
    def parse(cls, config: Any) -> "Trigger":
        """A trigger as written in a model's config or --vars '{stream_trigger: ...}': a one-key
        mapping, or a string ('available_now', 'once', 'on_new_data', '4 seconds')."""
        if isinstance(config, str):
            config = {config: True} if config in FLAG_KINDS else {"processing_time": config}
        if not isinstance(config, Mapping):
            raise ValueError(f"trigger {config!r} is neither a mapping nor a string")
        trigger = cls.from_config(config)
        if trigger.kind == "processing_time" and not is_interval(trigger.interval):
            raise ValueError(f"processing_time {trigger.interval!r} is not an interval")
        return trigger

    def as_config(self) -> dict[str, Any]:
        """The one-key mapping from_config reads back."""
        return {self.kind: self.interval if self.kind == "processing_time" else True}

    @property
    def runs_until_caught_up(self) -> bool:
        """True when the query stops by itself once the data present at its start is processed
        (and the model is not served after the run)."""
        return self.kind not in ("processing_time", "on_new_data")

    @property
    def on_new_data(self) -> bool:
        """Served by running it again whenever an input commits (serve/dataflow.py)."""
        return self.kind == "on_new_data"

    def catch_up(self) -> "Trigger":
        """The trigger that processes what is there now and stops: the first leg of a served stream."""
        return self if self.runs_until_caught_up else AVAILABLE_NOW

    def writer_kwargs(self) -> dict[str, Any]:
        if self.kind in ("available_now", "on_new_data"):  # on_new_data: each run is one
            return {"availableNow": True}
        if self.kind == "once":
            return {"once": True}
        return {"processingTime": self.interval}


AVAILABLE_NOW = Trigger("available_now")


def describe_trigger(used: "Trigger", configured: "Trigger | None" = None) -> str:
    """The trigger the run wrote the table with; when a run-wide --vars stream_trigger replaced
    the model's own, both (the always-on service runs every model that way)."""
    described = _in_words(used)
    if configured is not None and configured != used:
        described += f" (run-wide, from --vars stream_trigger; the model's own: {_in_words(configured)})"
    return described


def _in_words(trigger: "Trigger") -> str:
    if trigger.kind == "processing_time":
        return f"processing time, every {trigger.interval}"
    if trigger.on_new_data:
        return "on new data (each time an input commits)"
    return trigger.kind.replace("_", " ")
