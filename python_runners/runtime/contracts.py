"""A model's enforced dbt contract (`contract: {enforced: true}`), read from its node without Spark.

Placeholder: filled in by the contracts work (issue 22, part 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional


@dataclass(frozen=True)
class Contract:
    model: str

    @classmethod
    def from_node(cls, node: Mapping[str, Any]) -> Optional["Contract"]:
        return None
