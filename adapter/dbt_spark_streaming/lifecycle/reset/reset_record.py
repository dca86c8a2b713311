"""The record a checkpoint reset leaves in the emptied checkpoint folder: where to start, per input.

`_reset.json` holds the starting point and the model's streaming inputs as they were at the reset
(a Delta input's latest version); once the stream has planned a batch it is moved aside to
`_reset.applied.json`. checkpoints.py knows a reset checkpoint by it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Optional

from dbt_spark_streaming.lifecycle.reset.reset_arguments import StartingPoint, current_ms, iso

RECORD = "_reset.json"
APPLIED = "_reset.applied.json"


@dataclass(frozen=True)
class Input:
    """One streaming input of the model: a Delta table (`table`), or a meta.stream source."""

    name: str  # ref name, or "<source>.<table>"
    kind: str  # "delta_table", "delta_path", "kafka", or a file format
    table: Optional[str] = None  # delta_table: schema.table, as the compiled SQL names it
    path: Optional[str] = None  # delta_path
    latest_version: Optional[int] = None  # Delta inputs: at the reset

    @property
    def is_delta(self) -> bool:
        return self.kind in ("delta_table", "delta_path")


@dataclass(frozen=True)
class Reset:
    model: str
    point: StartingPoint
    inputs: tuple[Input, ...] = ()
    reset_at_ms: int = field(default_factory=lambda: current_ms())

    def to_json(self) -> str:
        return json.dumps({
            "model": self.model, "reset_at": iso(self.reset_at_ms), "reset_at_ms": self.reset_at_ms,
            "from": self.point.as_json(),
            "inputs": [{k: v for k, v in i.__dict__.items() if v is not None} for i in self.inputs],
        }, indent=2)

    @classmethod
    def from_json(cls, text: str) -> "Reset":
        data = json.loads(text)
        return cls(
            model=data["model"], point=StartingPoint(**data["from"]),
            inputs=tuple(Input(**i) for i in data.get("inputs", ())), reset_at_ms=data["reset_at_ms"],
        )

    def input_of_table(self, table: str) -> Optional[Input]:
        for read in self.inputs:
            if read.kind == "delta_table" and normal_table(read.table or "") == normal_table(table):
                return read
        return None

    def input_named(self, name: str) -> Optional[Input]:
        return next((read for read in self.inputs if read.name == name and read.kind != "delta_table"), None)


def normal_table(name: str) -> str:
    name = name.replace("`", "").lower()
    return name[len("spark_catalog."):] if name.startswith("spark_catalog.") else name
