"""A backfill's historical data as the streaming input it replaces: exactly its columns and types.

The history is a table or files (parquet, Delta, json, csv). It gets the input's columns in the
input's order, `_metadata` and the columns a source's reader adds (unreadable lines, rescued
fields) included, null where the history has none; json and csv files are read with the
stream's own types. A mismatch or a missing path is an error naming the columns.
"""

from __future__ import annotations

from typing import Optional

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType

from dbt_spark_streaming.config.backfills import Backfill
from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.sources.frames import json_with_rescued_data
from dbt_spark_streaming.config.sources import StreamSource

METADATA = "_metadata"
_STREAM_ONLY_OPTIONS = ("maxFilesPerTrigger", "maxBytesPerTrigger", "cleanSource", "sourceArchiveDir")


def historical_frame(
    spark: SparkSession, where: str, backfill: Backfill, input_name: str, input_schema: StructType,
    source: Optional[StreamSource], lakehouse: Lakehouse,
) -> DataFrame:
    """The historical data with exactly the columns and types of the input it replaces; a
    mismatch or a missing path is an error naming the columns."""
    added = {METADATA}  # columns the reader adds: file metadata, unreadable lines, rescued fields
    corrupt = rescued = None
    if source is not None:
        corrupt, rescued = source.corrupt_record_column, source.rescued_data_column
        added |= {column for column in (corrupt, rescued) if column}
    data = StructType([f for f in input_schema.fields if f.name not in added])
    if backfill.table:
        if not spark.catalog.tableExists(backfill.table):
            raise StreamingModelError(f"{where}: table {backfill.table} does not exist. {_FIX_PLACE}")
        frame = _with_metadata(spark.read.options(**backfill.options).table(backfill.table))
        _check_columns(where, input_name, data, frame.schema, types=True)
        return _conformed(frame, input_schema)
    path = lakehouse.landing_path(backfill.path)
    if not hadoop_fs.exists(spark, path):
        raise StreamingModelError(
            f"{where}: its path {path} (backfills.path: {backfill.path}) does not exist. {_FIX_PLACE}"
        )
    inherited = source.options if source is not None and source.format == backfill.format else {}
    options = {k: v for k, v in {**inherited, **backfill.options}.items() if k not in _STREAM_ONLY_OPTIONS}
    if backfill.format in ("parquet", "delta"):
        frame = _with_metadata(spark.read.format(backfill.format).options(**options).load(path))
        _check_columns(where, input_name, data, frame.schema, types=True)
        return _conformed(frame, input_schema)
    # json, csv: the names the files have, then a read with the stream's own types (a value that
    # does not fit lands in the corrupt-record column, as it would from the stream).
    found = spark.read.format(backfill.format).options(**options).load(path).schema
    found = StructType([f for f in found.fields if f.name != (corrupt or "_corrupt_record")])
    if backfill.format == "csv" and options.get("header") != "true":
        if len(found.fields) != len(data.fields):
            raise StreamingModelError(
                f"{where}: its csv files have {len(found.fields)} columns, the streaming input it "
                f"replaces ({input_name}) has {len(data.fields)} ({', '.join(data.fieldNames())}); "
                "without a header the columns are read by position. Make them match."
            )
    else:
        _check_columns(where, input_name, data, found, types=False, extra_allowed=bool(rescued))
    read_schema = StructType(data.fields + ([StructField(corrupt, input_schema[corrupt].dataType)] if corrupt else []))
    if corrupt:
        options["columnNameOfCorruptRecord"] = corrupt
    if rescued:
        lines = spark.read.format("text").options(**options).load(path)
        frame = json_with_rescued_data(lines, rescued, read_schema, options)
    else:
        frame = spark.read.format(backfill.format).options(**options).schema(read_schema).load(path)
        frame = frame.select("*", METADATA)
    return _conformed(frame, input_schema)


_FIX_PLACE = "Correct the backfill's path (or table), or remove the backfill."


def _with_metadata(frame: DataFrame) -> DataFrame:
    """With the files' `_metadata` column where the reader has one (file and Delta reads)."""
    try:
        return frame.select("*", METADATA)
    except (PySparkException, Py4JJavaError):
        return frame


def _check_columns(
    where: str, input_name: str, wanted: StructType, found: StructType, types: bool,
    extra_allowed: bool = False,
) -> None:
    have = {f.name.lower(): f for f in found.fields if f.name != METADATA}
    want = {f.name.lower(): f for f in wanted.fields}
    missing = [f"{f.name} {f.dataType.simpleString()}" for key, f in want.items() if key not in have]
    extra = [] if extra_allowed else [f.name for key, f in have.items() if key not in want]
    other = [
        f"{f.name} ({have[key].dataType.simpleString()} in the history, {f.dataType.simpleString()} in the stream)"
        for key, f in want.items()
        if types and key in have and have[key].dataType.simpleString() != f.dataType.simpleString()
    ]
    if missing or extra or other:
        said = [f"missing: {', '.join(missing)}" if missing else "",
                f"not in the stream: {', '.join(extra)}" if extra else "",
                f"other types: {', '.join(other)}" if other else ""]
        raise StreamingModelError(
            f"{where}: the historical data does not have the schema of the streaming input it "
            f"replaces ({input_name}); {'; '.join(s for s in said if s)}. The backfill runs the "
            "model's SQL on it as if it were the stream: make its columns match (e.g. a Delta "
            "table of the history selected and cast to the stream's columns)."
        )


def _conformed(frame: DataFrame, schema: StructType) -> DataFrame:
    """The frame with exactly `schema`'s columns, in its order: reader-added columns the history
    lacks are null, `_metadata` keeps the fields both have."""
    have = {name.lower(): name for name in frame.columns}
    columns = []
    for wanted in schema.fields:
        actual = have.get(wanted.name.lower())
        if actual is None:
            columns.append(F.lit(None).cast(wanted.dataType).alias(wanted.name))
        elif wanted.name == METADATA and isinstance(wanted.dataType, StructType):
            columns.append(_metadata_like(frame.schema[actual].dataType, wanted.dataType))
        else:
            columns.append(F.col(f"`{actual}`").cast(wanted.dataType).alias(wanted.name))
    return frame.select(*columns)


def _metadata_like(found, wanted: StructType) -> Column:
    names = set(found.fieldNames()) if isinstance(found, StructType) else set()
    return F.struct(*(
        (F.col(f"{METADATA}.`{field.name}`").cast(field.dataType) if field.name in names
         else F.lit(None).cast(field.dataType)).alias(field.name)
        for field in wanted.fields
    )).alias(METADATA)
