"""A streaming_table, cdc_table or copy_into model's config, read once and checked whole before anything runs.

dbt compiles a model before running it, and `dbt compile` does nothing else, so the ref() and
source() overrides check the model being compiled here, and each materialisation reads its config
from here before it drops, creates or starts anything. The write, full refresh, the docs' table
properties and the streaming lint all take their settings from that one object: the common part
(common.py) composed with its materialisation's own (streaming_table.py, copy_into.py). Every
error names the model, the setting and what is allowed. No Spark needed.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from dbt_spark_streaming.config.common import (  # noqa: F401  (the config's names, in one place)
    ModelConfig, ModelConfigError, SourceRead, source_stream_meta, stream_meta,
)
from dbt_spark_streaming.config.copy_into import CopyIntoConfig, read_copy_into  # noqa: F401
from dbt_spark_streaming.config.materializations import (  # noqa: F401
    STREAM_MATERIALIZATIONS, STREAMING_MATERIALIZATIONS,
)
from dbt_spark_streaming.config.streaming_table import (  # noqa: F401
    DEFAULT_ROLLBACK_WINDOW, CdcTableConfig, StreamingTableConfig, read_streaming_table,
)
from dbt_spark_streaming.config.unknown_keys import refuse_unknown_keys
from dbt_spark_streaming.errors import ConfigError

_READERS = {"streaming_table": read_streaming_table, "cdc_table": read_streaming_table, "copy_into": read_copy_into}


def read_model_config(
    node: Mapping[str, Any], graph: Mapping[str, Any], run_vars: Optional[Mapping[str, Any]] = None
) -> ModelConfig:
    """The model's config from its node and dbt's graph (its `nodes` and `sources`), with the
    run's --vars that change it (`stream_trigger`, `copy_into_force`)."""
    name, config = node["name"], node["config"]
    materialized = config.get("materialized")
    if materialized not in STREAMING_MATERIALIZATIONS:
        raise ModelConfigError(
            f"Model {name}: materialized {materialized!r} is not a streaming materialisation "
            f"({', '.join(STREAMING_MATERIALIZATIONS)})."
        )
    refuse_unknown_keys(name, materialized, config)
    refuse_streams_without_source_override(node, graph)
    return _READERS[materialized](node, graph, run_vars or {})


def config_error_of(
    node: Mapping[str, Any], graph: Mapping[str, Any], run_vars: Optional[Mapping[str, Any]] = None
) -> Optional[str]:
    """What read_model_config refuses in a streaming model's config, said; None when nothing,
    or when the node is not a streaming model. Asked before a run starts Spark: a run whose every
    model would stop on one stops before waiting for a session (dbt's adapter, relation.py)."""
    if (node.get("config") or {}).get("materialized") not in STREAMING_MATERIALIZATIONS:
        return None
    try:
        read_model_config(node, graph, run_vars)
    except ConfigError as error:
        return str(error)
    return None


def refuse_streams_without_source_override(node: Mapping[str, Any], graph: Mapping[str, Any]) -> None:
    """A meta.stream source is read as a stream only through the project's own source() (dbt
    takes that override from the root project only); without it, SQL would name a table that is
    not there. dbt lists the macros a model's SQL called: the override is one of them."""
    macros = (node.get("depends_on") or {}).get("macros")
    if macros is None:
        return
    streamed = [f"{source}.{table}" for source, table in node.get("sources") or []
                if source_stream_meta(graph, source, table)]
    if streamed and not any(macro.rsplit(".", 1)[-1] == "source" for macro in macros):
        raise ModelConfigError(
            f"Model {node['name']}: it reads {', '.join(streamed)}, declared with meta.stream, but "
            "the project has no streaming source() macro, so the source would be read as a table "
            "that is not there. Run `dbt-spark-streaming init` in the project's folder: it writes "
            "the root-project macros (dbt takes a source() override only from the root project)."
        )
