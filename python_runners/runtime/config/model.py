"""A streaming_table, cdc_table or copy_into model's config, read once and checked whole before anything runs.

dbt compiles a model before running it, and `dbt compile` does nothing else, so the ref() and
source() overrides check the model being compiled here, and each materialisation reads its
`ModelConfig` from here before it drops, creates or starts anything. The write, full refresh,
the docs' table properties and the streaming lint all take their settings from that one object.
Every error names the model, the setting and what is allowed. No Spark needed.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from python_runners.runtime.lifecycle import query_changes

from python_runners.runtime.config import settings
from python_runners.runtime.config.backfills import Backfill, backfills_from_config
from python_runners.runtime.delta.catalog import describe_trigger
from python_runners.runtime.config.cdc import CHANGE_DATA_FEED, ApplyChanges
from python_runners.runtime.errors import ConfigError, streams_changing_table
from python_runners.runtime.config.contracts import Contract
from python_runners.runtime.config.event_time import Dedupe, Watermark
from python_runners.runtime.config.expectations import Expectations
from python_runners.runtime.lifecycle.full_refresh import follows_changes, stream_reads_of
from python_runners.runtime.config.intervals import parse_duration_seconds
from python_runners.runtime.lakehouse import Lakehouse
from python_runners.runtime.sources.views import FILE_FORMATS, StreamSource
from python_runners.runtime.config.triggers import AVAILABLE_NOW, Trigger

STREAMING_MATERIALIZATIONS = ("streaming_table", "cdc_table", "copy_into")
DEFAULT_ROLLBACK_WINDOW = "7 days"
DELETION_VECTORS = "delta.enableDeletionVectors"
# The ones that run a streaming query, each with a checkpoint of its own.
STREAM_MATERIALIZATIONS = ("streaming_table", "cdc_table")
OUTPUT_MODES = ("append", "complete", "update")
_TRUE, _FALSE = (True, "true", "True"), (False, None, "false", "False")


class ModelConfigError(ConfigError):
    pass


@dataclass(frozen=True)
class SourceRead:
    """A meta.stream source the model selects from, its meta checked."""

    name: str  # "<source>.<table>"
    meta: Mapping[str, Any]
    source: StreamSource


@dataclass(frozen=True)
class ModelConfig:
    model: str
    materialized: str
    # Where the model's progress lives: its checkpoint, or a copy_into model's load log.
    checkpoint: str
    partition_by: tuple[str, ...] = ()
    tblproperties: Mapping[str, str] = field(default_factory=dict)
    append_new_columns: bool = False  # on_schema_change: append_new_columns
    sources: tuple[SourceRead, ...] = ()
    expectations: Expectations = Expectations("")
    contract: Optional[Contract] = None  # contract: {enforced: true} with its columns
    # streaming_table
    output_mode: str = "append"
    unique_key: tuple[str, ...] = ()
    trigger: Trigger = AVAILABLE_NOW  # this run's (a run-wide --vars stream_trigger wins)
    model_trigger: Trigger = AVAILABLE_NOW  # the model's own
    watermarks: tuple[Watermark, ...] = ()
    dedupe: Optional[Dedupe] = None
    backfills: tuple[Backfill, ...] = ()  # historical data appended once (runtime/config/backfills.py)
    on_query_change: str = query_changes.DEFAULT_POLICY
    query: Optional[query_changes.QueryVersion] = None  # None while only compiling
    rollback_window: str = DEFAULT_ROLLBACK_WINDOW  # how long a redeploy keeps the old version
    # The tables of the streaming models this one streams from whose swap it cannot read over (a
    # plain stream(ref()) or stream_appends): a redeploy of theirs rebuilds this one (redeploy.py).
    streamed_models: tuple[str, ...] = ()
    # cdc_table
    changes: Optional[ApplyChanges] = None
    # copy_into
    force: bool = False

    @property
    def copy_source(self) -> SourceRead:
        """The one file source a copy_into model loads (checked when the config was read)."""
        return self.sources[0]

    def documented(self) -> dict[str, str]:
        """Table properties `dbt docs generate` shows for the model (catalog.py)."""
        if self.materialized == "copy_into":
            return {"copy_into.load_log": self.checkpoint, **self.expectations.documented()}
        shown = {
            "streaming.output_mode": self.output_mode,
            "streaming.trigger": describe_trigger(self.trigger, self.model_trigger),
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
        quarantine = self.expectations.quarantine_table(table)
        return [*tables, quarantine] if quarantine else tables

    @property
    def keeps_rows_by_merge(self) -> bool:
        """Rows updated and deleted in place: not an append-only table to stream from."""
        return self.changes is not None or self.output_mode == "update"


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
    _refuse_unknown_keys(name, materialized, config)
    run_vars = run_vars or {}
    common = {
        "model": name,
        "materialized": materialized,
        "partition_by": _columns(config.get("partition_by")),
        "tblproperties": dict(config.get("tblproperties") or {}),
        "append_new_columns": _appends_new_columns(name, materialized, config.get("on_schema_change")),
        "sources": _sources_read(node, graph),
        "expectations": Expectations.from_config(name, config),
        "contract": Contract.from_node(node),
    }
    if materialized == "copy_into":
        backfills_from_config(name, materialized, "append", config.get("backfills"))  # refused
        _appends_only(name, materialized, config.get("output_mode"))  # a folder's +output_mode
        return ModelConfig(
            **common,
            checkpoint=_checkpoint_of(node, "load_log_location"),
            force=_force(name, config.get("force", run_vars.get("copy_into_force"))),
        )
    output_mode = config.get("output_mode") or "append"
    changes = None
    if materialized == "cdc_table":
        changes = ApplyChanges.from_config(name, config)
        output_mode = _cdc_output_mode(name, output_mode, config)
        # Each batch's MERGE touches rows in most files; marking them deleted beside the file
        # instead of rewriting it (bench/cdc_apply.py: 1M keys, 1% a batch).
        common["tblproperties"] = {DELETION_VECTORS: "true", **common["tblproperties"]}
    if output_mode not in OUTPUT_MODES:
        raise ModelConfigError(
            f"Model {name}: output_mode {output_mode!r} is not supported by streaming_table. "
            "Allowed values: 'append' (each input row written once), 'complete' (an aggregate "
            "rewritten every batch) or 'update' (changed aggregate rows merged by unique_key)."
        )
    unique_key = _columns(config.get("unique_key"))
    if output_mode == "update" and not unique_key:
        raise ModelConfigError(
            f"Model {name}: output_mode 'update' merges each batch's changed rows into the table "
            "by unique_key. Set unique_key to the columns that identify a row (the GROUP BY "
            "columns, window included), e.g. unique_key=['device_id']."
        )
    _refuse_streams_of_changing_tables(node, graph)
    model_trigger = _trigger(name, config.get("trigger"))
    run_wide = run_vars.get("stream_trigger")
    return ModelConfig(
        **common,
        checkpoint=_own_checkpoint(node, graph.get("nodes", {}).values()),
        output_mode=output_mode,
        unique_key=unique_key,
        trigger=_trigger(name, run_wide) if run_wide else model_trigger,
        model_trigger=model_trigger,
        watermarks=Watermark.list_from_config(name, config.get("watermark")),
        dedupe=Dedupe.from_config(name, config.get("dedupe")),
        changes=changes,
        backfills=backfills_from_config(name, materialized, output_mode, config.get("backfills")),
        on_query_change=query_changes.policy_from_config(name, config.get("on_query_change"), materialized),
        query=query_changes.QueryVersion.of_node(node),
        rollback_window=_rollback_window(name, config.get("rollback_window")),
        streamed_models=_streamed_models(node, graph),
    )


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
            reads = stream_reads_of(str(reader.get("raw_code") or ""), upstream["name"])
            if any(not follows_changes(read) for read in reads):
                found.append(f"{upstream['schema']}.{upstream.get('alias') or upstream['name']}")
    return tuple(dict.fromkeys(found))


# stream({{ ref('m') }}) with no options after it: a read of the table's appends only.
_PLAIN_STREAM_OF_REF = re.compile(
    r"\bstream\s*\(\s*\{\{\s*ref\(\s*['\"]([^'\"]+)['\"]\s*\)\s*\}\}\s*\)(?!\s*with\b)", re.I
)


def _refuse_streams_of_changing_tables(node: Mapping[str, Any], graph: Mapping[str, Any]) -> None:
    """Caught while compiling, before the reader's first run fails at the upstream's first update."""
    read = set(_PLAIN_STREAM_OF_REF.findall(node.get("raw_code") or ""))
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


def _refuse_unknown_keys(model: str, materialized: str, config: Mapping[str, Any]) -> None:
    """dbt keeps any key in a model's config, so a misspelt streaming setting would be ignored
    and the model run on the default. A key is the materialisation's setting (settings.py) or
    one of dbt's own configs; a setting of another streaming materialisation set to none is how
    a model unsets a folder's `+<key>`."""
    allowed = settings.allowed(materialized)
    for key, value in config.items():
        key = str(key)
        if key in allowed:
            continue
        others = settings.owners(key)
        if others and value is None:
            continue
        raise ModelConfigError(_unknown_key(model, materialized, key, others))


def _unknown_key(model: str, materialized: str, key: str, others: list[str]) -> str:
    own = settings.SETTINGS[materialized]
    listed = f"{materialized} settings: {', '.join(own)}"
    meant = _nearest(key, [*own, *settings.ALSO_READ.get(materialized, ())])
    if others:
        guess = f"; did you mean {meant!r}?" if meant else "."
        switch = (f", or make it a {others[0]} (materialized='{others[0]}')" if len(others) == 1
                  else "")
        return (
            f"Model {model}: config {key!r} is a {' and '.join(others)} setting; a {materialized} "
            f"model has no such setting{guess} Remove it{switch} (set {key}=none in the model to "
            f"unset a folder's +{key}). {listed}."
        )
    meant = meant or _nearest(key, sorted(settings.dbt_configs()))
    guess = f"; did you mean {meant!r}?" if meant else ", nor one of dbt's model configs."
    return (
        f"Model {model}: config {key!r} is not a {materialized} setting{guess} {listed}. "
        "Unknown keys are refused rather than ignored; dbt's own configs (tags, meta, "
        "pre-hook, ...) are fine, and keys of your own go under meta."
    )


def _nearest(key: str, names: list[str]) -> Optional[str]:
    """The name `key` is most likely a misspelling of, among `names`."""
    lookalike = settings.LOOKALIKES.get(key.lower())
    if lookalike in names and lookalike != key:
        return lookalike
    close = difflib.get_close_matches(key.lower(), names, n=1, cutoff=0.6)
    return close[0] if close else None


def _appends_only(model: str, materialized: str, output_mode: Any) -> None:
    """A copy_into model appends each load; a folder's +output_mode: append covers it too."""
    if output_mode not in (None, "", "append"):
        raise ModelConfigError(
            f"Model {model}: a {materialized} model appends the rows of each load; output_mode "
            f"{output_mode!r} does not apply. Remove it (or set output_mode=none in the model to "
            "unset a folder's +output_mode)."
        )


def _columns(value: Any) -> tuple[str, ...]:
    if not value:
        return ()
    return (value,) if isinstance(value, str) else tuple(str(column) for column in value)


def _trigger(model: str, configured: Any) -> Trigger:
    try:
        return Trigger.parse(configured or "available_now")
    except ValueError:
        raise ModelConfigError(
            f"Model {model}: trigger {configured!r} is not valid. Allowed: "
            "{'available_now': true}, {'once': true} or {'processing_time': '<n> seconds'} (in "
            "the model's config, or for a whole run with --vars '{stream_trigger: ...}')."
        ) from None


def _force(model: str, force: Any) -> bool:
    if force in _TRUE:
        return True
    if force in _FALSE:
        return False
    raise ModelConfigError(
        f"Model {model}: force {force!r} is not valid; give true (reload every file once) or "
        "false (the default), in the model's config or with --vars '{copy_into_force: true}'."
    )


def _appends_new_columns(model: str, materialized: str, on_schema_change: Any) -> bool:
    """dbt gives every model 'ignore'; an append into Delta refuses columns its table does not
    have, so 'ignore' and 'fail' both stop at a new column."""
    on_schema_change = on_schema_change or "fail"
    if on_schema_change not in ("ignore", "fail", "append_new_columns"):
        raise ModelConfigError(
            f"Model {model}: on_schema_change {on_schema_change!r} is not supported by "
            f"{materialized}. Allowed: 'fail' (a new column stops the write) or "
            "'append_new_columns' (new columns are added to the Delta table)."
        )
    return on_schema_change == "append_new_columns"


def _sources_read(node: Mapping[str, Any], graph: Mapping[str, Any]) -> tuple[SourceRead, ...]:
    """The meta.stream sources the model selects from, each meta checked (unknown keys too);
    a copy_into model needs exactly one."""
    wanted = [tuple(source) for source in node.get("sources") or ()]
    found = []
    for source in (graph.get("sources") or {}).values():
        if (source["source_name"], source["name"]) not in wanted:
            continue
        meta = stream_meta(source)
        if meta:
            name = f"{source['source_name']}.{source['name']}"
            found.append(SourceRead(name, meta, StreamSource.from_meta(name, meta)))
    if node["config"].get("materialized") == "copy_into":
        _check_copy_source(node["name"], found)
    for read in found:
        if read.source.archive_to:
            _check_one_streaming_reader(read.name, (graph.get("nodes") or {}).values())
    return tuple(found)


def _check_one_streaming_reader(source: str, nodes: Iterable[Mapping[str, Any]]) -> None:
    """A source with archive_to has its files moved away once its reader processed them, so a
    second streaming reader would miss them."""
    readers = [
        node["name"] for node in nodes
        if node["resource_type"] == "model"
        and node["config"].get("materialized") in STREAM_MATERIALIZATIONS
        and source in (".".join(read) for read in node.get("sources") or ())
    ]
    if len(readers) > 1:
        raise ModelConfigError(
            f"Source {source} has archive_to set and is read as a stream by {', '.join(readers)}. "
            "The first to process a file moves it away from the others. Let one model ingest it "
            "(a bronze model) and the others read that model with stream(ref(...)), or remove "
            "archive_to."
        )


def _check_copy_source(model: str, found: list[SourceRead]) -> None:
    if len(found) != 1:
        selected = ", ".join(read.name for read in found) or "none"
        raise ModelConfigError(
            f"Model {model}: copy_into loads the files of one source declared with "
            f"meta.stream (format json, csv or parquet); this model selects from {selected}. "
            "Select from exactly one, e.g. {{ source('landing', 'recordings') }}; join other "
            "tables with ref()."
        )
    source = found[0].source
    if source.format not in FILE_FORMATS:
        raise ModelConfigError(
            f"Model {model}: copy_into loads files; source {source.name} is {source.format}. "
            "Read it with a streaming_table model instead."
        )
    if source.archive_to:
        raise ModelConfigError(
            f"Model {model}: source {source.name} has archive_to, so a streaming reader moves its "
            "files away; copy_into keeps files where they are (its load log knows what it "
            "loaded). Remove archive_to, or read the source with a streaming_table model."
        )


def stream_meta(source: Mapping[str, Any]) -> Optional[Mapping[str, Any]]:
    """A source's meta.stream, from its `meta:` or its `config: {meta: ...}`."""
    meta = source.get("meta") or {}
    config_meta = (source.get("config") or {}).get("meta") or {}
    return meta.get("stream") or config_meta.get("stream")


def source_stream_meta(
    graph: Mapping[str, Any], source_name: str, table_name: str
) -> Optional[Mapping[str, Any]]:
    """The meta.stream of source `source_name.table_name` in dbt's graph; None for a plain source."""
    for source in (graph.get("sources") or {}).values():
        if source["source_name"] == source_name and source["name"] == table_name:
            return stream_meta(source)
    return None


def _checkpoint_of(node: Mapping[str, Any], setting: str = "checkpoint_location") -> str:
    """As configured, else <checkpoint root>/<schema>/<model>."""
    configured = node["config"].get(setting)
    return Lakehouse.from_env().checkpoint_path(configured or f"{node['schema']}/{node['alias']}")


def _own_checkpoint(node: Mapping[str, Any], nodes: Iterable[Mapping[str, Any]]) -> str:
    """Two streams sharing a checkpoint corrupt each other's progress."""
    checkpoint = _checkpoint_of(node)
    sharing = [
        other["name"]
        for other in nodes
        if other["resource_type"] == "model"
        and other["config"].get("materialized") in STREAM_MATERIALIZATIONS
        and other["unique_id"] != node["unique_id"]
        and _checkpoint_of(other) == checkpoint
    ]
    if sharing:
        raise ModelConfigError(
            f"Models {node['name']} and {', '.join(sharing)} resolve to the same "
            f"checkpoint_location {checkpoint}. Each streaming model needs a checkpoint of its "
            "own: remove checkpoint_location to use the default, or give each a different one."
        )
    return checkpoint
