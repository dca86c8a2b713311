"""Reading what a dbtRunner invocation did."""

from __future__ import annotations


def node_results(result) -> dict:
    """{node name: dbt's RunResult} of one invocation."""
    return {r.node.name: r for r in result.result.results}


def rows_processed(result) -> dict:
    """{model name: input rows its streaming query processed in this run}."""
    return {
        name: r.adapter_response.get("rows_affected")
        for name, r in node_results(result).items()
        if r.node.resource_type == "model"
    }


def failure_messages(result) -> str:
    texts = [str(result.exception)] if result.exception else []
    if result.result is not None:
        texts += [str(r.message) for r in result.result.results if r.status in ("error", "fail")]
    return "\n".join(texts)
