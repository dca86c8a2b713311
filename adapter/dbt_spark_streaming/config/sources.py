"""A source's `meta: {stream: {...}}` settings, read and checked once: a StreamSource.

Each mistake names the source, the setting and the fix. Formats: json, csv and parquet files,
Delta tables, Kafka topics. File sources take their schema from the YAML or infer it once (see
sources/schemas.py), can be rate-limited per micro-batch (`max_files_per_trigger` /
`max_bytes_per_trigger`) and can move processed files away (`archive_to`) or delete them
(`delete_processed`), Spark's cleanSource, once the batch that read them committed; json and csv lines
that cannot be read keep their raw text in the corrupt-record column, and json fields outside
the schema can be rescued (`rescued_data_column`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from dbt_spark_streaming.config.kafka import KafkaSourceConfigError, kafka_options
from dbt_spark_streaming.errors import ConfigError

FILE_FORMATS = ("json", "csv", "parquet")
FORMATS = FILE_FORMATS + ("delta", "kafka")
# Formats whose unreadable lines Spark can keep whole (PERMISSIVE mode, the default).
CORRUPT_RECORD_FORMATS = ("json", "csv")
_LIMITS = ("max_files_per_trigger", "max_bytes_per_trigger")
META_KEYS = {
    **{fmt: ("format", "path", "schema", "options", "rescued_data_column", "schema_evolution",
             "archive_to", "delete_processed", "create_path", *_LIMITS) for fmt in FILE_FORMATS},
    "delta": ("format", "path", "options", *_LIMITS),
    "kafka": ("format", "bootstrap_servers", "topic", "topic_pattern", "starting_offsets",
              "max_offsets_per_trigger", "options"),
}
CORRUPT_RECORD_COLUMN = "_corrupt_record"
# A batch's count of the rows with a corrupt-record column set that entered a model's query, in
# its progress's observedMetrics under names with this prefix (writes/unreadable_counts.py).
UNREADABLE_OBSERVATION_PREFIX = "unreadable_lines_"
# How a file source's schema follows new columns (sources/schemas.py keeps its versions).
POLICIES = ("add_new_columns", "rescue", "fail_on_new_columns", "none")
# Spark's reader options that clean a folder up; set through archive_to / delete_processed, which
# the project checks (one streaming reader per folder, no copy_into over it).
_CLEAN_SOURCE_OPTIONS = ("cleansource", "sourcearchivedir")


def default_policy(declared: bool, rescued_data_column: Optional[str]) -> str:
    if not declared:
        return "add_new_columns"
    return "rescue" if rescued_data_column else "fail_on_new_columns"


class StreamSourceConfigError(ConfigError):
    pass


@dataclass(frozen=True)
class StreamSource:
    name: str  # "<source>.<table>", for messages
    format: str
    path: str
    schema: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    rescued_data_column: str | None = None
    schema_evolution: str | None = None
    archive_to: str | None = None
    delete_processed: bool = False
    create_path: bool = False

    @property
    def clean_source(self) -> str | None:
        """Spark's cleanSource for the source's stream: "archive", "delete" or None (files stay)."""
        if self.archive_to:
            return "archive"
        return "delete" if self.delete_processed else None

    @property
    def clean_source_setting(self) -> str | None:
        """The meta.stream setting that cleans the folder up, for messages."""
        if self.archive_to:
            return "archive_to"
        return "delete_processed" if self.delete_processed else None

    @property
    def corrupt_record_column(self) -> str | None:
        """The column that keeps unreadable lines whole; None when the source has none."""
        options = {key.lower(): value for key, value in self.options.items()}
        permissive = options.get("mode", "PERMISSIVE").upper() == "PERMISSIVE"
        if self.format not in CORRUPT_RECORD_FORMATS or not permissive:
            return None
        return options.get("columnnameofcorruptrecord", CORRUPT_RECORD_COLUMN)

    @classmethod
    def from_meta(cls, name: str, meta: Mapping[str, Any]) -> "StreamSource":
        fmt = str(meta.get("format", "")).lower()
        if fmt not in FORMATS:
            raise StreamSourceConfigError(
                f"Source {name}: meta.stream.format is {meta.get('format')!r}; "
                f"use one of {', '.join(FORMATS)}."
            )
        unknown = sorted(set(map(str, meta)) - set(META_KEYS[fmt]))
        if unknown:
            raise StreamSourceConfigError(
                f"Source {name}: meta.stream.{unknown[0]} is not a setting of {fmt} sources; "
                f"remove it, or fix its name. Settings: {', '.join(META_KEYS[fmt])}. Reader "
                "options Spark knows go under meta.stream.options."
            )
        create_path = meta.get("create_path", False)
        if not isinstance(create_path, bool):
            raise StreamSourceConfigError(
                f"Source {name}: meta.stream.create_path is {create_path!r}; give true (create the "
                "folder when it does not exist) or false (the default: a missing folder is an error)."
            )
        delete_processed = meta.get("delete_processed", False)
        if not isinstance(delete_processed, bool):
            raise StreamSourceConfigError(
                f"Source {name}: meta.stream.delete_processed is {delete_processed!r}; give true "
                "(delete each file once the batch that read it committed) or false (the default: "
                "files stay)."
            )
        if fmt == "kafka":
            try:
                options = kafka_options(name, meta)
            except KafkaSourceConfigError as error:
                raise StreamSourceConfigError(str(error)) from None
            extra = {str(k): _option_value(v) for k, v in (meta.get("options") or {}).items()}
            return cls(name=name, format=fmt, path="", options={**options, **extra})
        if not meta.get("path"):
            raise StreamSourceConfigError(
                f"Source {name}: meta.stream.path is missing; give the folder (or Delta table "
                f"path) to read, absolute or relative to the landing folder."
            )
        rescued = meta.get("rescued_data_column")
        if rescued and fmt != "json":
            raise StreamSourceConfigError(
                f"Source {name}: meta.stream.rescued_data_column works for json sources only "
                f"(this one is {fmt}); remove it."
            )
        options = {str(k): _option_value(v) for k, v in (meta.get("options") or {}).items()}
        options.update(_rate_limit_options(name, meta))
        evolution = None
        if fmt in FILE_FORMATS:
            evolution = _schema_evolution(name, fmt, meta, options, rescued)
        archive_to = meta.get("archive_to")
        _check_clean_source(name, archive_to, delete_processed, options)
        return cls(
            name=name, format=fmt, path=str(meta["path"]), schema=meta.get("schema"),
            options=options, rescued_data_column=rescued, schema_evolution=evolution,
            archive_to=str(archive_to) if archive_to else None, delete_processed=delete_processed,
            create_path=create_path,
        )


def _check_clean_source(name: str, archive_to: Any, delete_processed: bool, options: Mapping[str, str]) -> None:
    """A processed file is moved (archive_to) or deleted (delete_processed), not both; and
    Spark's own options for it go through those settings, which the project checks."""
    if archive_to and delete_processed:
        raise StreamSourceConfigError(
            f"Source {name}: meta.stream.archive_to and meta.stream.delete_processed are both set; "
            "a processed file is either moved or deleted. Keep archive_to to move processed files "
            "to that folder, or delete_processed: true to delete them, not both."
        )
    given = [key for key in options if key.lower() in _CLEAN_SOURCE_OPTIONS]
    if given:
        raise StreamSourceConfigError(
            f"Source {name}: meta.stream.options.{given[0]} is Spark's clean-up of processed files; "
            "set meta.stream.archive_to: <folder> (cleanSource archive) or "
            "meta.stream.delete_processed: true (cleanSource delete) instead, and remove the option."
        )


def _rate_limit_options(name: str, meta: Mapping[str, Any]) -> dict[str, str]:
    limits = {
        "maxFilesPerTrigger": meta.get("max_files_per_trigger"),
        "maxBytesPerTrigger": meta.get("max_bytes_per_trigger"),
    }
    given = {option: value for option, value in limits.items() if value is not None}
    if len(given) > 1:
        raise StreamSourceConfigError(
            f"Source {name}: give max_files_per_trigger or max_bytes_per_trigger, not both "
            "(Spark's file source takes one limit per micro-batch)."
        )
    for option, value in given.items():
        if not str(value).isdigit() or int(value) < 1:
            setting = "max_files_per_trigger" if option == "maxFilesPerTrigger" else "max_bytes_per_trigger"
            raise StreamSourceConfigError(
                f"Source {name}: meta.stream.{setting} is {value!r}; give a positive whole number."
            )
    return {option: str(value) for option, value in given.items()}


def _schema_evolution(
    name: str, fmt: str, meta: Mapping[str, Any], options: Mapping[str, str], rescued: str | None
) -> str:
    declared = bool(meta.get("schema"))
    headerless_csv = fmt == "csv" and options.get("header") != "true"
    if headerless_csv and meta.get("schema_evolution") not in (None, "none"):
        raise StreamSourceConfigError(
            f"Source {name}: csv files without a header have no column names to evolve by; set "
            "options.header: true, or leave schema_evolution out."
        )
    if headerless_csv and not declared:
        raise StreamSourceConfigError(
            f"Source {name}: csv files without a header need meta.stream.schema (or "
            "options.header: true to infer the schema from the header)."
        )
    if headerless_csv:
        return "none"  # columns are read by position
    policy = meta.get("schema_evolution") or default_policy(declared, rescued)
    if policy not in POLICIES:
        raise StreamSourceConfigError(
            f"Source {name}: meta.stream.schema_evolution is {policy!r}; use one of "
            f"{', '.join(POLICIES)}."
        )
    if policy == "add_new_columns" and declared:
        raise StreamSourceConfigError(
            f"Source {name}: schema_evolution add_new_columns evolves an inferred schema; this "
            "source declares meta.stream.schema. Add new columns to the declared schema, or "
            "remove it to have the schema inferred once and evolved."
        )
    if policy == "rescue" and not rescued:
        raise StreamSourceConfigError(
            f"Source {name}: schema_evolution rescue keeps new fields in the rescued-data column; "
            "set meta.stream.rescued_data_column (json sources), e.g. _rescued_data."
        )
    return policy


def _option_value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
