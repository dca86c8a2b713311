"""A model's streaming inputs at a checkpoint reset, and whether a starting point fits them.

The inputs come from the model's SQL as written and dbt's graph, no Spark: the upstream models and
sources it streams with stream(ref(...)), stream_changes(...) or stream_appends(...) (Delta
tables), and its meta.stream sources (Delta paths, Kafka topics, files).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from dbt_spark_streaming.config.stream_reads import REF, SOURCE, stream_reads
from dbt_spark_streaming.lifecycle.reset.reset_arguments import CheckpointResetError, StartingPoint
from dbt_spark_streaming.lifecycle.reset.reset_record import Input


def streaming_inputs(node: Mapping[str, Any], graph: Mapping[str, Any], config: Any) -> list[Input]:
    """The model's streaming inputs, from its SQL as written and dbt's graph (no Spark)."""
    reads = stream_reads(node.get("raw_code") or "")
    inputs: list[Input] = []
    streamed_refs = {read.relation for read in reads if read.kind == REF}
    for unique_id in (node.get("depends_on") or {}).get("nodes", ()):
        upstream = (graph.get("nodes") or {}).get(unique_id)
        if upstream and upstream["name"] in streamed_refs:
            inputs.append(Input(name=upstream["name"], kind="delta_table", table=_relation(upstream)))
    streamed_sources = {read.relation for read in reads if read.kind == SOURCE}
    for source in (graph.get("sources") or {}).values():
        if f"{source['source_name']}.{source['name']}" in streamed_sources:
            inputs.append(Input(name=f"{source['source_name']}.{source['name']}", kind="delta_table",
                                table=_relation(source)))
    for read in config.sources:
        if read.source.format == "delta":
            inputs.append(Input(name=read.name, kind="delta_path", path=read.source.path))
        else:
            inputs.append(Input(name=read.name, kind=read.source.format))
    return inputs


def _relation(node: Mapping[str, Any]) -> str:
    return f"{node['schema']}.{node.get('alias') or node.get('identifier') or node['name']}"


def check_point_fits(model: str, point: StartingPoint, inputs: Sequence[Input]) -> None:
    names = ", ".join(f"{read.name} ({_kind_said(read)})" for read in inputs)
    if point.kind == "version":
        if len(inputs) != 1 or not inputs[0].is_delta:
            raise CheckpointResetError(
                f"Model {model}: from_version sets where one Delta input starts; this model "
                f"streams from {names}. Use from_timestamp (every input from one time) or from_now."
            )
        read = inputs[0]
        if read.latest_version is None or read.latest_version < 0:
            raise CheckpointResetError(
                f"Model {model}: its input {read.name} has no Delta table yet, so it has no version "
                f"{point.version}. Run the upstream first, or use from_now."
            )
        if point.version > read.latest_version:
            raise CheckpointResetError(
                f"Model {model}: from_version {point.version} is beyond the latest version "
                f"({read.latest_version}) of its input {read.name}. Give a version from 0 to "
                f"{read.latest_version} (the first one the next run reads), or from_now to read "
                f"only commits after version {read.latest_version}."
            )
    if point.kind == "offsets" and any(read.kind != "kafka" for read in inputs):
        raise CheckpointResetError(
            f"Model {model}: from_offsets sets Kafka offsets; this model streams from {names}. "
            "Use from_timestamp or from_now for other inputs (from_version for one Delta input)."
        )


def _kind_said(read: Input) -> str:
    return {"delta_table": "Delta table", "delta_path": "Delta source", "kafka": "Kafka"}.get(
        read.kind, f"{read.kind} files")
