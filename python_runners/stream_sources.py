"""Streaming temp views for dbt sources declared with `meta: {stream: {...}}`.

A model selects from `{{ source('landing', 'recordings') }}`; at run time that resolves to a temp
view over `spark.readStream`, registered here. File sources also expose Spark's `_metadata`
column (`_metadata.file_path`, `_metadata.file_modification_time`, ...).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from python_runners.lakehouse import Lakehouse

FILE_FORMATS = ("json", "csv", "parquet")
FORMATS = FILE_FORMATS + ("delta",)


class StreamSourceConfigError(ValueError):
    pass


@dataclass(frozen=True)
class StreamSource:
    name: str  # "<source>.<table>", for messages
    format: str
    path: str
    schema: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    rescued_data_column: str | None = None

    @classmethod
    def from_meta(cls, name: str, meta: Mapping[str, Any]) -> "StreamSource":
        fmt = str(meta.get("format", "")).lower()
        if fmt not in FORMATS:
            raise StreamSourceConfigError(
                f"Source {name}: meta.stream.format is {meta.get('format')!r}; "
                f"use one of {', '.join(FORMATS)}."
            )
        if not meta.get("path"):
            raise StreamSourceConfigError(
                f"Source {name}: meta.stream.path is missing; give the folder (or Delta table "
                f"path) to read, absolute or relative to the landing folder."
            )
        if fmt in FILE_FORMATS and not meta.get("schema"):
            raise StreamSourceConfigError(
                f"Source {name}: a streaming {fmt} source needs meta.stream.schema, a DDL string "
                f"such as \"id string, amount double\", so that every run reads files the same way."
            )
        rescued = meta.get("rescued_data_column")
        if rescued and fmt != "json":
            raise StreamSourceConfigError(
                f"Source {name}: meta.stream.rescued_data_column works for json sources only "
                f"(this one is {fmt}); remove it."
            )
        options = {str(k): _option_value(v) for k, v in (meta.get("options") or {}).items()}
        return cls(
            name=name, format=fmt, path=str(meta["path"]), schema=meta.get("schema"),
            options=options, rescued_data_column=rescued,
        )


def _option_value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def source_frame(
    spark: SparkSession, source: StreamSource, lakehouse: Lakehouse, streaming: bool = True
) -> DataFrame:
    """The source as a stream, or (for models that are not streaming) as a batch read of the same data."""
    path = lakehouse.landing_path(source.path)
    if source.format in FILE_FORMATS and "://" not in path:
        os.makedirs(path, exist_ok=True)  # an empty landing folder is a stream with no data yet
    reader = spark.readStream if streaming else spark.read
    if source.rescued_data_column:
        lines = reader.format("text").options(**source.options).load(path)
        return _json_with_rescued_data(lines, source)
    reader = reader.format(source.format).options(**source.options)
    if source.schema:
        reader = reader.schema(source.schema)
    frame = reader.load(path)
    if source.format in FILE_FORMATS:
        frame = frame.select("*", "_metadata")
    return frame


def _json_with_rescued_data(lines: DataFrame, source: StreamSource) -> DataFrame:
    """JSON lines parsed with the declared schema, plus the fields the schema does not name.

    Spark's JSON reader drops fields outside a declared schema without a word. Reading the lines
    as text and parsing them here keeps those fields, as JSON text, in the rescued-data column
    (null when there are none), so a new field in the files is never lost.
    """
    known = StructType.fromDDL(source.schema).fieldNames()
    parsed = F.from_json("value", source.schema, dict(source.options))
    extra = F.map_filter(
        F.from_json("value", "map<string,string>"),
        lambda key, _: ~F.array_contains(F.array(*[F.lit(name) for name in known]), key),
    )
    return (
        lines.where(F.trim("value") != "")
        .select(parsed.alias("record"), extra.alias("extra"), "_metadata")
        .select(
            "record.*",
            F.when(F.size("extra") > 0, F.to_json("extra")).alias(source.rescued_data_column),
            "_metadata",
        )
    )


def register_source_view(
    spark: SparkSession, source: StreamSource, lakehouse: Lakehouse, streaming: bool = True
) -> str:
    """Register the source as a temp view and return the view's name."""
    view_name = f"{'stream' if streaming else 'batch'}_source__{source.name.replace('.', '__')}"
    source_frame(spark, source, lakehouse, streaming).createOrReplaceTempView(view_name)
    return view_name
