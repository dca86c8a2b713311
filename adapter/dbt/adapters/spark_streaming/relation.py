"""dbt-spark's relation, through which a run first meets the models it was asked for.

Before its first SQL, which waits for the Spark session, a `dbt run` or `dbt build` opens its
"master" connection and asks for the relation of every selected model (to create their schemas):
`create_from` notes them (the adapter forgets what was noted before, while parsing). When every
model the run was asked for is a streaming one whose own config it would refuse (a misspelt
setting, a value not allowed), the run stops there, with each model's message, instead of
waiting half a minute for a session none of them can use. A run with any model that can run
goes on, and each broken model fails on its own, as before.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Mapping, Optional

from dbt.adapters.contracts.relation import HasQuoting, RelationConfig
from dbt.adapters.spark.relation import SparkRelation


class SparkStreamingRelation(SparkRelation):
    @classmethod
    def create_from(cls, quoting: HasQuoting, relation_config: RelationConfig, **kwargs: Any):
        ASKED_FOR.note(getattr(relation_config, "unique_id", None))
        return super().create_from(quoting, relation_config, **kwargs)


class AskedFor:
    """The unique ids of the relational nodes a dbt invocation asked relations of, before its
    first SQL."""

    def __init__(self) -> None:
        self._ids: list[str] = []
        self._lock = threading.Lock()

    def note(self, unique_id: Optional[str]) -> None:
        if unique_id:
            with self._lock:
                self._ids.append(unique_id)

    def take(self) -> list[str]:
        with self._lock:
            ids, self._ids = list(dict.fromkeys(self._ids)), []
        return ids


ASKED_FOR = AskedFor()


def errors_if_none_can_run(
    asked_for: list[str], graph: Mapping[str, Any], error_of: Callable[[Mapping[str, Any]], Optional[str]],
) -> list[tuple[str, str]]:
    """Each asked-for model's (unique id, config error), when every one has one; else none
    (found at the first model that can run: a run of good models checks one model here)."""
    nodes = graph.get("nodes") or {}
    errors = []
    for unique_id in asked_for:
        error = error_of(nodes[unique_id]) if unique_id in nodes else None
        if error is None:
            return []
        errors.append((unique_id, error))
    return errors
