"""Streaming temp views for dbt sources declared with `meta: {stream: {...}}`.

A model selects from `{{ source('landing', 'recordings') }}`; that resolves to a temp view over
`spark.readStream` (or `spark.read` for models that are not streaming), named when the model
renders and registered here when the model runs (SourceViews). File sources also expose Spark's `_metadata`
column (`_metadata.file_path`, `_metadata.file_modification_time`, ...), take their schema from
the YAML or infer it once (see source_schemas), can be rate-limited per micro-batch
(`max_files_per_trigger` / `max_bytes_per_trigger`) and can move processed files away
(`archive_to`). Which files a stream has read is recorded in each reading model's checkpoint, so a
file is never ingested twice by it, across restarts.

Nothing is lost without a trace: a source folder that does not exist is an error (unless
`create_path: true`), json and csv lines that cannot be read with the schema keep their raw text
in the corrupt-record column, and fields outside the schema are rescued with their JSON types.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from python_runners.runtime.delta import hadoop_fs
from python_runners.runtime.sources import schemas as source_schemas
from python_runners.runtime.sources.kafka import KafkaSourceConfigError, batch_read_options, kafka_options
from python_runners.runtime.lakehouse import Lakehouse
from python_runners.runtime.errors import ConfigError

FILE_FORMATS = ("json", "csv", "parquet")
FORMATS = FILE_FORMATS + ("delta", "kafka")
# Formats whose unreadable lines Spark can keep whole (PERMISSIVE mode, the default).
CORRUPT_RECORD_FORMATS = ("json", "csv")
_LIMITS = ("max_files_per_trigger", "max_bytes_per_trigger")
META_KEYS = {
    **{fmt: ("format", "path", "schema", "options", "rescued_data_column", "schema_evolution",
             "archive_to", "create_path", *_LIMITS) for fmt in FILE_FORMATS},
    "delta": ("format", "path", "options", *_LIMITS),
    "kafka": ("format", "bootstrap_servers", "topic", "topic_pattern", "starting_offsets",
              "max_offsets_per_trigger", "options"),
}
CORRUPT_RECORD_COLUMN = "_corrupt_record"


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
    create_path: bool = False

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
        return cls(
            name=name, format=fmt, path=str(meta["path"]), schema=meta.get("schema"),
            options=options, rescued_data_column=rescued, schema_evolution=evolution,
            archive_to=str(archive_to) if archive_to else None, create_path=create_path,
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
    policy = meta.get("schema_evolution") or source_schemas.default_policy(declared, rescued)
    if policy not in source_schemas.POLICIES:
        raise StreamSourceConfigError(
            f"Source {name}: meta.stream.schema_evolution is {policy!r}; use one of "
            f"{', '.join(source_schemas.POLICIES)}."
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


def source_frame(
    spark: SparkSession, source: StreamSource, lakehouse: Lakehouse, streaming: bool = True,
    files: Sequence[str] | None = None,
) -> DataFrame:
    """The source as a stream, or (for models that are not streaming) as a batch read of the same
    data; `files` narrows a batch read of a file source to those files (copy_into's loads)."""
    if source.format == "kafka":
        if streaming:
            return spark.readStream.format("kafka").options(**source.options).load()
        return spark.read.format("kafka").options(**batch_read_options(source.options)).load()
    if source.format not in FILE_FORMATS:
        reader = (spark.readStream if streaming else spark.read).format(source.format)
        return reader.options(**source.options).load(lakehouse.landing_path(source.path))
    path = landing_folder(spark, source, lakehouse)
    schema = file_source_schema(spark, source, lakehouse, path)
    options = dict(source.options)
    if source.corrupt_record_column:
        options["columnNameOfCorruptRecord"] = source.corrupt_record_column
    if streaming and source.archive_to:
        options.update(cleanSource="archive", sourceArchiveDir=lakehouse.landing_path(source.archive_to))
    reader = spark.readStream if streaming else spark.read
    paths = list(files) if files is not None and not streaming else path
    if source.rescued_data_column:
        lines = reader.format("text").options(**options).load(paths)
        return _json_with_rescued_data(lines, source.rescued_data_column, schema, options)
    frame = reader.format(source.format).options(**options).schema(schema).load(paths)
    return frame.select("*", "_metadata")


def landing_folder(spark: SparkSession, source: StreamSource, lakehouse: Lakehouse) -> str:
    """The file source's folder, created if the source says `create_path: true`.

    A folder that does not exist is an error otherwise: a mistyped path would be a stream that
    reads nothing, run after run, looking like "no data yet". Checked through Hadoop's
    FileSystem, so URIs (s3a://, abfss://, ...) are checked too; on an object store a "folder"
    exists once an object lies under it (or a create_path marker does).
    """
    path = lakehouse.landing_path(source.path)
    if hadoop_fs.exists(spark, path):
        return path
    if not source.create_path:
        raise StreamSourceConfigError(
            f"Source {source.name}: its folder {path} (meta.stream.path: {source.path}) does not "
            "exist. Create the folder, correct meta.stream.path, or set meta.stream.create_path: "
            "true to have it created empty (a stream with no data yet)."
        )
    hadoop_fs.mkdirs(spark, path)
    return path


def _with_corrupt_record_column(schema: StructType, column: str | None) -> StructType:
    if column is None or column in schema.fieldNames():
        return schema
    return StructType(schema.fields + [StructField(column, StringType(), True)])


def file_source_schema(
    spark: SparkSession, source: StreamSource, lakehouse: Lakehouse, path: str
) -> StructType:
    # Without a corrupt-record column Spark turns a value of the wrong type into null, unseen.
    corrupt = source.corrupt_record_column
    declared = None
    if source.schema:
        declared = _with_corrupt_record_column(StructType.fromDDL(source.schema), corrupt)
    store = source_schemas.SchemaStore(spark, f"{lakehouse.checkpoints}/_source_schemas/{source.name}")
    # Inference reads the files as the stream will, minus options that only make sense for streams.
    read_options = {
        key: value for key, value in source.options.items()
        if key not in ("maxFilesPerTrigger", "maxBytesPerTrigger")
    }
    if source.format == "parquet":
        read_options["mergeSchema"] = "true"  # else Spark takes the schema of one file's footer
    reader = spark.read.format(source.format).options(**read_options)
    try:
        schema = source_schemas.current_schema(
            spark, source.name, reader, path, store, declared, source.schema_evolution or "none"
        )
    except source_schemas.SourceSchemaError as error:
        raise StreamSourceConfigError(str(error)) from None
    return _with_corrupt_record_column(schema, corrupt)


def _json_with_rescued_data(
    lines: DataFrame, rescued_data_column: str, schema: StructType, options: Mapping[str, str]
) -> DataFrame:
    """JSON lines parsed with the declared schema, plus the fields the schema does not name.

    Spark's JSON reader drops fields outside a declared schema without a word. Reading the lines
    as text and parsing them here keeps those fields, as JSON text, in the rescued-data column
    (null when there are none), so a new field in the files is never lost.
    """
    known = schema.fieldNames()
    parsed = F.from_json("value", schema, dict(options))
    # variant values keep their JSON types through to_json: 97 stays 97, not "97" as with string.
    extra = F.map_filter(
        F.from_json("value", "map<string,variant>"),
        lambda key, _: ~F.array_contains(F.array(*[F.lit(name) for name in known]), key),
    )
    return (
        lines.where(F.trim("value") != "")
        .select(parsed.alias("record"), extra.alias("extra"), "_metadata")
        .select(
            "record.*",
            F.when(F.size("extra") > 0, F.to_json("extra")).alias(rescued_data_column),
            "_metadata",
        )
    )


def source_view_name(source_name: str, streaming: bool = True) -> str:
    """The temp view a model reads the source through: one for streams, one for batch reads."""
    return f"{'stream' if streaming else 'batch'}_source__{source_name.replace('.', '__')}"


def register_source_view(
    spark: SparkSession, source: StreamSource, lakehouse: Lakehouse, streaming: bool = True
) -> str:
    """Register the source as a temp view and return the view's name."""
    view_name = source_view_name(source.name, streaming)
    source_frame(spark, source, lakehouse, streaming).createOrReplaceTempView(view_name)
    return view_name


class SourceViews:
    """The source views of one dbt invocation: named while models render, registered as they run.

    `source()` only names the view (`declare`, no Spark), so `dbt compile`, `dbt ls` or
    `dbt docs generate` neither start Spark for it nor list landing folders, infer schemas or
    create folders. A view is registered when SQL that names it is about to run (a streaming
    model's query, or any statement dbt executes), once per invocation and Spark session: the
    adapter (and so this registry) is new for each dbt invocation, so a second `dbt run` in the
    same process registers its views again, with what has landed since. A registration that
    fails (a missing folder) is tried again by the next model that reads the source, so each
    reader fails with the source's message.
    """

    def __init__(self) -> None:
        self._declared: dict[str, tuple[StreamSource, bool]] = {}
        self._registered: dict[str, SparkSession] = {}  # view -> the session it was registered in
        self._pattern: re.Pattern | None = None
        self._lock = threading.Lock()
        self._view_locks: dict[str, threading.Lock] = {}

    def declare(self, source: StreamSource, streaming: bool = True) -> str:
        view = source_view_name(source.name, streaming)
        key = view.lower()  # Spark's view names are case-insensitive, as SQL may write them
        with self._lock:
            if self._declared.get(key) != (source, streaming):
                self._declared[key] = (source, streaming)
                self._registered.pop(key, None)
                self._view_locks.setdefault(key, threading.Lock())
                self._pattern = re.compile(
                    r"(?<![\w$])(" + "|".join(map(re.escape, self._declared)) + r")(?![\w$])",
                    re.IGNORECASE,
                )
        return view

    def streaming_sources(self) -> dict[str, StreamSource]:
        """The declared views of streams (lower case) and their sources."""
        with self._lock:
            return {view: source for view, (source, streaming) in self._declared.items() if streaming}

    def named_in(self, sql: str) -> list[str]:
        """The declared views that the SQL names, in order of first mention."""
        pattern = self._pattern
        if pattern is None or not sql:
            return []
        return list(dict.fromkeys(match.lower() for match in pattern.findall(sql)))

    def register_named_in(
        self, spark_for: Callable[[], SparkSession], sql: str, lakehouse: Lakehouse | None = None
    ) -> list[str]:
        """Register the declared views the SQL names that this session does not have yet;
        returns the views registered now. Raises StreamSourceConfigError (e.g. a missing folder)."""
        registered = []
        for view in self.named_in(sql):
            with self._view_locks[view]:  # two threads reading one source register it once
                spark = spark_for()
                if self._registered.get(view) is spark:
                    continue
                source, streaming = self._declared[view]
                register_source_view(spark, source, lakehouse or Lakehouse.from_env(), streaming)
                self._registered[view] = spark
                registered.append(view)
        return registered
