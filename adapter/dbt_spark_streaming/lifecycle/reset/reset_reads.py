"""A reset model's SQL reading its inputs from the reset's starting point.

Its stream(<table>) reads get Delta's starting option after their own (`with (...)`); each
meta.stream source it reads gets a view of this model's own (`<view>__from_reset__<model>`),
starting where the reset says, so other models reading the same source are untouched.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from dbt_spark_streaming.config.stream_reads import (
    SOURCE_VIEW, TABLE, StreamRead, replace_reads, reset_view_name, source_view_name,
)
from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.lifecycle.reset.reset_offsets import delta_options, kafka_options
from dbt_spark_streaming.lifecycle.reset.reset_record import Reset, normal_table
from dbt_spark_streaming.sources.frames import source_frame


def reading_from(
    spark: SparkSession, reset: Reset, config: Any, sql: str, source_views: Any, lakehouse: Any
) -> str:
    """The model's SQL reading from the reset's starting point: its stream() reads with Delta
    options, its meta.stream sources through views of its own."""
    sql = replace_reads(
        sql, lambda read: _stream_read_from(spark, reset, read) if read.kind == TABLE else None
    )
    for view in source_views.named_in(sql):
        sql = _read_source_view_from(spark, reset, config, view, sql, lakehouse)
    return sql


def _stream_read_from(spark: SparkSession, reset: Reset, read: StreamRead) -> str:
    table = read.relation
    recorded = reset.input_of_table(table)
    if recorded is None:
        raise StreamingModelError(
            f"Model {reset.model}: its checkpoint was reset (from {reset.point.describe()}) when it "
            f"did not stream from {normal_table(table)}; the reset has no starting point for it. "
            f"Reset again: `dbt run-operation reset_checkpoint --args "
            f"'{{select: {reset.model}, from_now: true}}'` (or from_version / from_timestamp)."
        )
    return read.with_options(delta_options(spark, reset, recorded))


def _read_source_view_from(
    spark: SparkSession, reset: Reset, config: Any, view: str, sql: str, lakehouse: Any
) -> str:
    read = next((r for r in config.sources if source_view_name(r.name) == view), None)
    if read is None:  # a batch view of a source: not streamed, nothing to start
        return sql
    recorded = reset.input_named(read.name)
    if recorded is None:
        raise StreamingModelError(
            f"Model {reset.model}: its checkpoint was reset (from {reset.point.describe()}) when it "
            f"did not read source {read.name}; the reset has no starting point for it. Reset "
            f"again: `dbt run-operation reset_checkpoint --args '{{select: {reset.model}, from_now: true}}'` "
            f"(or from_version / from_timestamp)."
        )
    source = read.source
    point = reset.point
    if source.format == "kafka":
        options = kafka_options(source.options, point)
        frame = source_frame(spark, replace(source, options=options), lakehouse)
    elif source.format == "delta":
        recorded = replace(recorded, path=lakehouse.landing_path(source.path))
        options = {**source.options, **delta_options(spark, reset, recorded)}
        frame = source_frame(spark, replace(source, options=options), lakehouse)
    else:
        frame = source_frame(spark, source, lakehouse).where(
            F.col("_metadata.file_modification_time") >= F.timestamp_millis(F.lit(point.timestamp_ms))
        )
    own = reset_view_name(view, reset.model)
    frame.createOrReplaceTempView(own)
    return replace_reads(
        sql, lambda read: own if read.kind == SOURCE_VIEW and read.relation.lower() == view.lower() else None
    )
