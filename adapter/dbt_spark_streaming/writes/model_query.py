"""A model's SQL as the streaming query it will run: resolved, watermarked and checked.

The query becomes a temp view (`<model>__stream_src`) that the streaming write starts from.
Creating it makes Spark resolve every input, so a missing upstream table, an unknown column or
an operation no stream can run correctly stops the model here, in the model's terms, before
anything is written or any checkpoint moves.
"""

from __future__ import annotations

import re
from typing import Collection

from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from py4j.protocol import Py4JJavaError

from dbt_spark_streaming.config.event_time import with_watermarks
from dbt_spark_streaming.config.model import ModelConfig
from dbt_spark_streaming.config.sources import CORRUPT_RECORD_COLUMN
from dbt_spark_streaming.config.stream_reads import name_stream_reads
from dbt_spark_streaming.sources.corrupt_lines import READABLE_SUFFIX
from dbt_spark_streaming.writes import unreadable_counts
from dbt_spark_streaming.writes.cdc.change_rows import FeedShape, check_feed
from dbt_spark_streaming.jvm import plans
from dbt_spark_streaming.delta.constraints import check_query
from dbt_spark_streaming.writes.expectation_checks import check_rules
from dbt_spark_streaming.errors import StreamingModelError, cannot_run, explain

# `dbt run --empty` renders each ref() as a subquery that reads no rows; inside stream(...) that
# is no table Spark can stream from, so the check reads the table itself (and starts nothing).
_EMPTY_REF_IN_STREAM = re.compile(
    r"\bstream\s*\(\s*\(\s*select \* from (?P<table>[^()]+?) where false limit 0\s*\)"
    r"\s*(?:_dbt_limit_subq_\w+)?\s*\)",
    re.I,
)

_LIMITS = {"GlobalLimit": "LIMIT", "LocalLimit": "LIMIT", "Tail": "LIMIT", "Offset": "OFFSET"}


def create_stream_view(
    spark: SparkSession, config: ModelConfig, sql: str, view: str,
    corrupt_record_columns: Collection[str] = (CORRUPT_RECORD_COLUMN,),
) -> DataFrame:
    """Register the model's query as the temp view `view` and return it (a cdc_table's settings
    and the model's expectations checked against its columns); each streaming input that has one
    of the `corrupt_record_columns` counts its unreadable lines (writes/unreadable_counts.py)."""
    model, changes, contract = config.model, config.changes, config.contract
    sql = name_stream_reads(sql)
    observe = unreadable_counts.observing(sql, corrupt_record_columns, READABLE_SUFFIX)
    try:
        watermarked = with_watermarks(spark, model, sql, config.watermarks, observe)
        # From the analysed frame, not from SQL text: the view keeps the resolved plan, so the
        # stream started from it later does not resolve every input table a second time.
        frame = spark.sql(watermarked)
        frame.createOrReplaceTempView(view)
    except (PySparkException, Py4JJavaError) as error:
        raise explain(model, error) from None
    refuse_what_a_stream_cannot_run(model, frame, config.output_mode)
    if changes is not None:
        check_feed(frame, changes)
    if contract is not None:  # a cdc_table's contract is of its table: stored columns, scd2's validity
        table = FeedShape(changes, frame.schema).table_schema() if changes is not None else frame.schema
        check_query(spark, contract, table, "the table's columns" if changes else "the query's columns")
    if config.expectations:
        check_rules(frame, config.expectations)
    return frame


def without_empty_refs(sql: str) -> str:
    """The SQL of a `--empty` run with each stream(<no rows>) reading its table again."""
    return _EMPTY_REF_IN_STREAM.sub(lambda match: f"stream({match['table']})", sql)


def refuse_what_a_stream_cannot_run(model: str, frame: DataFrame, output_mode: str) -> None:
    """Operations Spark accepts on a stream although they lose rows for good.

    A LIMIT (or OFFSET) over a stream counts rows across all micro-batches, for the life of the
    checkpoint: after the first n rows every later row is dropped, run after run, while each run
    reports success. Only a LIMIT over an aggregate in complete mode is sound (a top-n that is
    recomputed from all input each batch). Everything else a stream cannot run, Spark refuses
    itself (asked here, before the table is created), and streaming_errors retells it.
    """
    plan = plans.analyzed(frame)
    _spark_checks(model, frame, plan, output_mode)
    operation = _unbounded_limit(plan, output_mode)
    if operation:
        raise StreamingModelError(cannot_run(model, operation))


def _spark_checks(model: str, frame: DataFrame, plan, output_mode: str) -> None:
    """Spark's own check of a streaming plan, which it otherwise runs only when the query
    starts: after the model's table was created with the refused query's columns."""
    try:
        plans.check_streaming(frame, plan, output_mode)
    except (PySparkException, Py4JJavaError) as error:
        raise explain(model, error) from None


def _unbounded_limit(plan, output_mode: str) -> str | None:
    name = plans.node_name(plan)
    if name in _LIMITS and plans.is_streaming(plan):
        if not (output_mode == "complete" and plans.contains(plan, "Aggregate")):
            return _LIMITS[name]
    for child in plans.children(plan):
        found = _unbounded_limit(child, output_mode)
        if found:
            return found
    return None
