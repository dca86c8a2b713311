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
        options = {str(k): _option_value(v) for k, v in (meta.get("options") or {}).items()}
        return cls(name=name, format=fmt, path=str(meta["path"]), schema=meta.get("schema"), options=options)


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
    reader = reader.format(source.format).options(**source.options)
    if source.schema:
        reader = reader.schema(source.schema)
    frame = reader.load(path)
    if source.format in FILE_FORMATS:
        frame = frame.select("*", "_metadata")
    return frame


def register_source_view(
    spark: SparkSession, source: StreamSource, lakehouse: Lakehouse, streaming: bool = True
) -> str:
    """Register the source as a temp view and return the view's name."""
    view_name = f"{'stream' if streaming else 'batch'}_source__{source.name.replace('.', '__')}"
    source_frame(spark, source, lakehouse, streaming).createOrReplaceTempView(view_name)
    return view_name
