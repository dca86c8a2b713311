"""A streaming_table's config, and a cdc_table's (a streaming_table whose query is a change feed
applied by keys and sequence): output mode, trigger, watermarks, dedupe, backfills, what happens
when the query changes, and which models it streams from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from dbt_spark_streaming.config import query_version
from dbt_spark_streaming.config.backfills import Backfill, backfills_from_config
from dbt_spark_streaming.config.cdc import CHANGE_DATA_FEED, ApplyChanges
from dbt_spark_streaming.config.common import (
    ModelConfig, ModelConfigError, columns, common_settings, own_checkpoint,
)
from dbt_spark_streaming.config.event_time import Dedupe, Watermark
from dbt_spark_streaming.config.intervals import parse_duration_seconds
from dbt_spark_streaming.config.maintenance import DEFAULT_ROLLBACK_WINDOW
from dbt_spark_streaming.config.materializations import STREAM_MATERIALIZATIONS
from dbt_spark_streaming.config.stream_reads import REF, reads_of, stream_reads
from dbt_spark_streaming.config.triggers import AVAILABLE_NOW, Trigger, describe_trigger
from dbt_spark_streaming.errors import streams_changing_table

DELETION_VECTORS = "delta.enableDeletionVectors"
OUTPUT_MODES = ("append", "complete", "update")


# How the table was last written, not what it holds: a run that writes nothing leaves it as it
# is, so that switching triggers commits nothing that would wake the models downstream.
TRIGGER_PROPERTY = "streaming.trigger"


@dataclass(frozen=True)
class StreamingTableConfig(ModelConfig):
    output_mode: str = "append"
    unique_key: tuple[str, ...] = ()
    trigger: Trigger = AVAILABLE_NOW  # this run's (a run-wide --vars stream_trigger wins)
    model_trigger: Trigger = AVAILABLE_NOW  # the model's own
    watermarks: tuple[Watermark, ...] = ()
    dedupe: Optional[Dedupe] = None
    backfills: tuple[Backfill, ...] = ()  # historical data appended once (config/backfills.py)
    on_query_change: str = query_version.DEFAULT_POLICY
    query: Optional[query_version.QueryVersion] = None  # None while only compiling
    rollback_window: str = DEFAULT_ROLLBACK_WINDOW  # how long a redeploy keeps the old version
    # The tables of the streaming models this one streams from whose swap it cannot read over (a
    # plain stream(ref()) or stream_appends): a redeploy of theirs rebuilds this one (redeploy.py).
    streamed_models: tuple[str, ...] = ()
    changes: Optional[ApplyChanges] = None  # a cdc_table's (CdcTableConfig)
    # How far behind its inputs the model may fall while served (config `target_lag`): measured,
    # shown by status and the progress table, and said when missed (serve/dataflow.py).
    target_lag: Optional[str] = None

    @property
    def target_lag_seconds(self) -> Optional[float]:
        return parse_duration_seconds(self.target_lag) if self.target_lag else None

    @property
    def rollback_seconds(self) -> float:
        return parse_duration_seconds(self.rollback_window) or 0

    def documented(self) -> dict[str, str]:
        shown = {
            "streaming.output_mode": self.output_mode,
            TRIGGER_PROPERTY: describe_trigger(self.trigger, self.model_trigger),
            "streaming.checkpoint": self.checkpoint,
        }
        if self.changes is not None:
            shown["streaming.output_mode"] = f"apply changes ({self.changes.stored_as})"
            shown.update(self.changes.documented())
        if self.keeps_rows_by_merge and CHANGE_DATA_FEED not in self.tblproperties:
            # Rows change in place, so readers downstream stream the table's changes.
            shown[CHANGE_DATA_FEED] = "true"
        shown.update(self.expectations.documented())
        return shown

    def companion_tables(self, table: str) -> list[str]:
        """Tables kept beside the model's that a full refresh drops with it (a cdc_table's
        tombstones, the quarantine)."""
        tables = self.changes.companion_tables(table) if self.changes is not None else []
        return [*tables, *super().companion_tables(table)]

    @property
    def keeps_rows_by_merge(self) -> bool:
        """Rows updated and deleted in place: not an append-only table to stream from."""
        return self.changes is not None or self.output_mode == "update"


@dataclass(frozen=True)
class CdcTableConfig(StreamingTableConfig):
    """A streaming_table whose rows come from a change feed, applied as SCD type 1 or 2."""


def read_streaming_table(
    node: Mapping[str, Any], graph: Mapping[str, Any], run_vars: Mapping[str, Any]
) -> StreamingTableConfig:
    """A streaming_table's or cdc_table's config, checked whole."""
    name, config = node["name"], node["config"]
    materialized = config.get("materialized")
    common = common_settings(node, graph)
    output_mode = config.get("output_mode") or "append"
    changes = None
    if materialized == "cdc_table":
        changes = ApplyChanges.from_config(name, config)
        output_mode = _cdc_output_mode(name, output_mode, config)
        # Each batch's MERGE touches rows in most files; marking them deleted beside the file
        # instead of rewriting it (bench/cdc: 1M keys, 1% a batch).
        common["tblproperties"] = {DELETION_VECTORS: "true", **common["tblproperties"]}
    if output_mode not in OUTPUT_MODES:
        raise ModelConfigError(
            f"Model {name}: output_mode {output_mode!r} is not supported by streaming_table. "
            "Allowed values: 'append' (each input row written once), 'complete' (an aggregate "
            "rewritten every batch) or 'update' (changed aggregate rows merged by unique_key)."
        )
    unique_key = columns(config.get("unique_key"))
    if output_mode == "update" and not unique_key:
        raise ModelConfigError(
            f"Model {name}: output_mode 'update' merges each batch's changed rows into the table "
            "by unique_key. Set unique_key to the columns that identify a row (the GROUP BY "
            "columns, window included), e.g. unique_key=['device_id']."
        )
    _refuse_streams_of_changing_tables(node, graph)
    model_trigger = _trigger(name, config.get("trigger"))
    run_wide = run_vars.get("stream_trigger")
    kind = CdcTableConfig if changes is not None else StreamingTableConfig
    return kind(
        **common,
        checkpoint=own_checkpoint(node, graph.get("nodes", {}).values()),
        output_mode=output_mode,
        unique_key=unique_key,
        trigger=_trigger(name, run_wide) if run_wide else model_trigger,
        model_trigger=model_trigger,
        watermarks=Watermark.list_from_config(name, config.get("watermark")),
        dedupe=Dedupe.from_config(name, config.get("dedupe")),
        changes=changes,
        backfills=backfills_from_config(name, materialized, output_mode, config.get("backfills")),
        on_query_change=query_version.policy_from_config(name, config.get("on_query_change"), materialized),
        query=query_version.QueryVersion.of_node(node),
        rollback_window=_rollback_window(name, config.get("rollback_window")),
        streamed_models=_streamed_models(node, graph),
        target_lag=_target_lag(name, config.get("target_lag"), node),
    )


def _target_lag(model: str, value: Any, node: Mapping[str, Any]) -> Optional[str]:
    """`target_lag: '5 seconds'`. dbt's own `freshness` is its build_after scheduling, and dbt
    drops any other form of it without a word: a duration written there is refused here."""
    written = (node.get("unrendered_config") or {}).get("freshness")
    if written is not None and not (isinstance(written, Mapping) and "build_after" in written):
        raise ModelConfigError(
            f"Model {model}: freshness {written!r} is dbt's build_after setting, and dbt drops any "
            f"other form of it. For how far the served model may lag behind its inputs write "
            f"target_lag={written!r} instead (e.g. target_lag='5 seconds')."
        )
    if value in (None, ""):
        return None
    if parse_duration_seconds(value) is None:
        raise ModelConfigError(
            f"Model {model}: target_lag {value!r} is not a duration; give e.g. target_lag='5 seconds' "
            "(how far behind its inputs the served model may fall before the service says so)."
        )
    return str(value)


def _rollback_window(model: str, value: Any) -> str:
    if value in (None, ""):
        return DEFAULT_ROLLBACK_WINDOW
    if not isinstance(value, str) or parse_duration_seconds(value) is None:
        raise ModelConfigError(
            f"Model {model}: rollback_window {value!r} is not a duration; give e.g. "
            f"rollback_window='7 days' (how long a redeploy keeps the old version to roll back to)."
        )
    return value


def _streamed_models(node: Mapping[str, Any], graph: Mapping[str, Any]) -> tuple[str, ...]:
    """Through ephemeral models too: their SQL is inlined into the model's."""
    nodes = graph.get("nodes") or {}
    found, pending, seen = [], [node], set()
    while pending:
        reader = pending.pop()
        for unique_id in (reader.get("depends_on") or {}).get("nodes") or []:
            upstream = nodes.get(unique_id) or {}
            materialized = (upstream.get("config") or {}).get("materialized")
            if materialized == "ephemeral" and unique_id not in seen:
                seen.add(unique_id)
                pending.append(upstream)
            if materialized not in STREAM_MATERIALIZATIONS:
                continue
            reads = reads_of(str(reader.get("raw_code") or ""), upstream["name"])
            if any(not read.follows_changes for read in reads):
                found.append(f"{upstream['schema']}.{upstream.get('alias') or upstream['name']}")
    return tuple(dict.fromkeys(found))


def _refuse_streams_of_changing_tables(node: Mapping[str, Any], graph: Mapping[str, Any]) -> None:
    """Caught while compiling, before the reader's first run fails at the upstream's first update."""
    # stream({{ ref('m') }}) with no options after it: a read of the table's appends only.
    read = {r.relation for r in stream_reads(node.get("raw_code") or "") if r.kind == REF and not r.options}
    for other in (graph.get("nodes") or {}).values():
        if other["resource_type"] != "model" or other["name"] not in read:
            continue
        config = other["config"]
        if config.get("materialized") == "cdc_table" or (
            config.get("materialized") == "streaming_table" and config.get("output_mode") == "update"
        ):
            raise ModelConfigError(streams_changing_table(node["name"], other["name"]))


def _cdc_output_mode(model: str, output_mode: str, config: Mapping[str, Any]) -> str:
    """A cdc_table applies each change row as it arrives (append); a folder's +output_mode:
    append is fine, an aggregate's mode is not."""
    if output_mode != "append" or config.get("unique_key"):
        raise ModelConfigError(
            f"Model {model}: a cdc_table applies a feed of change rows by keys and "
            f"sequence_by; output_mode {output_mode!r} and unique_key do not apply. Remove them "
            "(keys names the columns that identify a row)."
        )
    return output_mode


def _trigger(model: str, configured: Any) -> Trigger:
    try:
        return Trigger.parse(configured or "available_now")
    except ValueError:
        raise ModelConfigError(
            f"Model {model}: trigger {configured!r} is not valid. Allowed: "
            "{'available_now': true}, {'once': true}, {'processing_time': '<n> seconds'} or "
            "{'on_new_data': true} (in "
            "the model's config, or for a whole run with --vars '{stream_trigger: ...}')."
        ) from None
