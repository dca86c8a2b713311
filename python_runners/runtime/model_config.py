"""A streaming_table or copy_into model's config, checked in one place before anything of it runs.

dbt compiles a model before running it, and `dbt compile` does nothing else, so the ref() and
source() overrides (macros/streaming/) check the model being compiled here, and the
materialisations check it again (a model that reads through neither) and take their settings
from it. Every error names the model, the setting and what is allowed. No Spark needed.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from python_runners.runtime.event_time import Dedupe, EventTimeConfigError, Watermark
from python_runners.runtime.lakehouse import Lakehouse
from python_runners.runtime.triggers import Trigger

STREAMING_MATERIALIZATIONS = ("streaming_table", "copy_into")
OUTPUT_MODES = ("append", "complete", "update")


class StreamingConfigError(ValueError):
    pass


def checked_settings(
    node: Mapping[str, Any], nodes: Iterable[Mapping[str, Any]], run_wide_trigger: Any = None
) -> dict[str, Any]:
    """The model's settings as its materialisation uses them, from the node as dbt's graph holds
    it; `nodes` are the graph's other nodes (checkpoints are not shared)."""
    name, config = node["name"], node["config"]
    materialized = config.get("materialized")
    partition_by = config.get("partition_by") or []
    settings = {
        "partition_by": [partition_by] if isinstance(partition_by, str) else list(partition_by),
        "tblproperties": config.get("tblproperties") or {},
        "append_new_columns": _appends_new_columns(name, materialized, config.get("on_schema_change")),
    }
    if materialized != "streaming_table":
        return settings

    output_mode = config.get("output_mode") or "append"
    if output_mode not in OUTPUT_MODES:
        raise StreamingConfigError(
            f"Model {name}: output_mode {output_mode!r} is not supported by streaming_table. "
            "Allowed values: 'append' (each input row written once), 'complete' (an aggregate "
            "rewritten every batch) or 'update' (changed aggregate rows merged by unique_key)."
        )
    unique_key = config.get("unique_key")
    if output_mode == "update" and not unique_key:
        raise StreamingConfigError(
            f"Model {name}: output_mode 'update' merges each batch's changed rows into the table "
            "by unique_key. Set unique_key to the columns that identify a row (the GROUP BY "
            "columns, window included), e.g. unique_key=['device_id']."
        )
    try:
        Watermark.list_from_config(name, config.get("watermark"))
        Dedupe.from_config(name, config.get("dedupe"))
    except EventTimeConfigError as error:
        raise StreamingConfigError(str(error)) from None
    return {
        **settings,
        "output_mode": output_mode,
        "unique_key": unique_key,
        "trigger": _trigger(name, run_wide_trigger or config.get("trigger")).as_config(),
        "model_trigger": _trigger(name, config.get("trigger")).as_config(),
        "watermark": config.get("watermark"),
        "dedupe": config.get("dedupe"),
        "checkpoint": _own_checkpoint(node, nodes),
    }


def _trigger(model: str, configured: Any) -> Trigger:
    try:
        return Trigger.parse(configured or "available_now")
    except ValueError:
        raise StreamingConfigError(
            f"Model {model}: trigger {configured!r} is not valid. Allowed: "
            "{'available_now': true}, {'once': true} or {'processing_time': '<n> seconds'} (in "
            "the model's config, or for a whole run with --vars '{stream_trigger: ...}')."
        ) from None


def _appends_new_columns(model: str, materialized: str, on_schema_change: Any) -> bool:
    """dbt gives every model 'ignore'; an append into Delta refuses columns its table does not
    have, so 'ignore' and 'fail' both stop at a new column."""
    on_schema_change = on_schema_change or "fail"
    if on_schema_change not in ("ignore", "fail", "append_new_columns"):
        raise StreamingConfigError(
            f"Model {model}: on_schema_change {on_schema_change!r} is not supported by "
            f"{materialized}. Allowed: 'fail' (a new column stops the write) or "
            "'append_new_columns' (new columns are added to the Delta table)."
        )
    return on_schema_change == "append_new_columns"


def _checkpoint_of(node: Mapping[str, Any]) -> str:
    """As configured, else <checkpoint root>/<schema>/<model> (the adapter's checkpoint_location)."""
    configured = node["config"].get("checkpoint_location")
    return Lakehouse.from_env().checkpoint_path(configured or f"{node['schema']}/{node['alias']}")


def _own_checkpoint(node: Mapping[str, Any], nodes: Iterable[Mapping[str, Any]]) -> str:
    """Two streams sharing a checkpoint corrupt each other's progress."""
    checkpoint = _checkpoint_of(node)
    sharing = [
        other["name"]
        for other in nodes
        if other["resource_type"] == "model"
        and other["config"].get("materialized") == "streaming_table"
        and other["unique_id"] != node["unique_id"]
        and _checkpoint_of(other) == checkpoint
    ]
    if sharing:
        raise StreamingConfigError(
            f"Models {node['name']} and {', '.join(sharing)} resolve to the same "
            f"checkpoint_location {checkpoint}. Each streaming model needs a checkpoint of its "
            "own: remove checkpoint_location to use the default, or give each a different one."
        )
    return checkpoint
