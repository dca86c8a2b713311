"""dbt's own timings of the nodes it ran (its run results), in seconds."""

from __future__ import annotations


def node_seconds(node_result, *phases: str) -> float:
    """The node's time in `phases` (dbt's timing names: compile, execute), by default execute."""
    phases = phases or ("execute",)
    return sum((timing.completed_at - timing.started_at).total_seconds()
               for timing in node_result.timing if timing.name in phases)


def execute_seconds(run_result) -> dict[str, float]:
    """Per node name, its execute time, over a `run_dbt` / `invoke_dbt` result's nodes."""
    return {node.node.name: node_seconds(node) for node in run_result.result.results}
