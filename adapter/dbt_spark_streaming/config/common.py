"""What every streaming materialisation's config has: the model, its progress location, its
table's layout and properties, the sources it reads (their meta.stream checked), its expectations
and contract; and the checks they share. Each materialisation's config adds its own settings
(streaming_table.py, copy_into.py); config/model.py reads the one a model asks for."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from dbt_spark_streaming.config.contracts import Contract
from dbt_spark_streaming.config.expectations import Expectations
from dbt_spark_streaming.config.maintenance import Maintenance
from dbt_spark_streaming.config.materializations import STREAM_MATERIALIZATIONS
from dbt_spark_streaming.errors import ConfigError
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.config.sources import FILE_FORMATS, StreamSource


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
    """The part of a model's config every streaming materialisation has."""

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
    maintenance: Maintenance = Maintenance()  # compaction and VACUUM (lifecycle/maintenance.py)

    def documented(self) -> dict[str, str]:
        """Table properties `dbt docs generate` shows for the model (delta/catalog.py)."""
        return self.expectations.documented()

    def companion_tables(self, table: str) -> list[str]:
        """Tables kept beside the model's that a full refresh drops with it (the quarantine)."""
        quarantine = self.expectations.quarantine_table(table)
        return [quarantine] if quarantine else []


def common_settings(node: Mapping[str, Any], graph: Mapping[str, Any]) -> dict[str, Any]:
    """The common part of the model's config, checked, as keyword arguments of its config."""
    name, config = node["name"], node["config"]
    materialized = config.get("materialized")
    maintenance = Maintenance.from_config(name, config)
    return {
        "model": name,
        "materialized": materialized,
        "partition_by": columns(config.get("partition_by")),
        "tblproperties": {**(maintenance.table_properties() if maintenance.enabled else {}),
                          **(config.get("tblproperties") or {})},
        "maintenance": maintenance,
        "append_new_columns": _appends_new_columns(name, materialized, config.get("on_schema_change")),
        "sources": _sources_read(node, graph),
        "expectations": Expectations.from_config(name, config),
        "contract": Contract.from_node(node),
    }


def columns(value: Any) -> tuple[str, ...]:
    if not value:
        return ()
    return (value,) if isinstance(value, str) else tuple(str(column) for column in value)


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


def checkpoint_of(
    node: Mapping[str, Any], setting: str = "checkpoint_location", lakehouse: Optional[Lakehouse] = None
) -> str:
    """As configured, else <checkpoint root>/<schema>/<model>."""
    configured = node["config"].get(setting)
    return (lakehouse or Lakehouse.from_env()).checkpoint_path(configured or f"{node['schema']}/{node['alias']}")


def own_checkpoint(node: Mapping[str, Any], nodes: Iterable[Mapping[str, Any]]) -> str:
    """Two streams sharing a checkpoint corrupt each other's progress."""
    lakehouse = Lakehouse.from_env()  # once: it resolves each of its folders on disk
    checkpoint = checkpoint_of(node, lakehouse=lakehouse)
    sharing = [
        other["name"]
        for other in nodes
        if other["resource_type"] == "model"
        and other["config"].get("materialized") in STREAM_MATERIALIZATIONS
        and other["unique_id"] != node["unique_id"]
        and checkpoint_of(other, lakehouse=lakehouse) == checkpoint
    ]
    if sharing:
        raise ModelConfigError(
            f"Models {node['name']} and {', '.join(sharing)} resolve to the same "
            f"checkpoint_location {checkpoint}. Each streaming model needs a checkpoint of its "
            "own: remove checkpoint_location to use the default, or give each a different one."
        )
    return checkpoint


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
        if read.source.clean_source_setting:
            _check_one_streaming_reader(read.name, read.source.clean_source_setting,
                                        (graph.get("nodes") or {}).values())
    return tuple(found)


def _check_one_streaming_reader(source: str, setting: str, nodes: Iterable[Mapping[str, Any]]) -> None:
    """A source with archive_to (or delete_processed) has its files moved away (or deleted) once
    its reader processed them, so a second streaming reader would miss them."""
    readers = [
        node["name"] for node in nodes
        if node["resource_type"] == "model"
        and node["config"].get("materialized") in STREAM_MATERIALIZATIONS
        and source in (".".join(read) for read in node.get("sources") or ())
    ]
    if len(readers) > 1:
        gone = ("deletes it before the others read it" if setting == "delete_processed"
                else "moves it away from the others")
        raise ModelConfigError(
            f"Source {source} has {setting} set and is read as a stream by {', '.join(readers)}. "
            f"The first to process a file {gone}. Let one model ingest it (a bronze model) and "
            f"the others read that model with stream(ref(...)), or remove {setting}."
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
    setting = source.clean_source_setting
    if setting:
        gone = "deletes its files" if setting == "delete_processed" else "moves its files away"
        raise ModelConfigError(
            f"Model {model}: source {source.name} has {setting}, so a streaming reader {gone}; "
            "copy_into keeps files where they are (its load log knows what it loaded). Remove "
            f"{setting}, or read the source with a streaming_table model."
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
