"""A meta.stream source read as a DataFrame: a stream, or a batch read of the same data.

File sources also expose Spark's `_metadata` column (`_metadata.file_path`,
`_metadata.file_modification_time`, ...). Nothing is lost without a trace: a source folder that
does not exist is an error (unless `create_path: true`), json and csv lines that cannot be read
with the schema keep their raw text in the corrupt-record column, and fields outside the schema
are rescued with their JSON types.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.sources import schemas as source_schemas
from dbt_spark_streaming.config.kafka import batch_read_options
from dbt_spark_streaming.config.sources import FILE_FORMATS, StreamSource, StreamSourceConfigError
from dbt_spark_streaming.config.stream_reads import source_input_name
from dbt_spark_streaming.lakehouse import Lakehouse


def source_frame(
    spark: SparkSession, source: StreamSource, lakehouse: Lakehouse, streaming: bool = True,
    files: Sequence[str] | None = None,
) -> DataFrame:
    """The source as a stream, or (for models that are not streaming) as a batch read of the same
    data; `files` narrows a batch read of a file source to those files (copy_into's loads)."""
    # A stream is named (config/stream_reads.py): its checkpoints key its offsets by the name.
    streams = spark.readStream.name(source_input_name(source.name)) if streaming else None
    if source.format == "kafka":
        if streams is not None:
            return streams.format("kafka").options(**source.options).load()
        return spark.read.format("kafka").options(**batch_read_options(source.options)).load()
    if source.format not in FILE_FORMATS:
        reader = (streams if streams is not None else spark.read).format(source.format)
        return reader.options(**source.options).load(lakehouse.landing_path(source.path))
    path = landing_folder(spark, source, lakehouse)
    schema = file_source_schema(spark, source, lakehouse, path)
    options = dict(source.options)
    if source.corrupt_record_column:
        options["columnNameOfCorruptRecord"] = source.corrupt_record_column
    if streaming and source.archive_to:
        options.update(cleanSource="archive", sourceArchiveDir=lakehouse.landing_path(source.archive_to))
    elif streaming and source.delete_processed:
        options.update(cleanSource="delete")
    reader = streams if streams is not None else spark.read
    paths = list(files) if files is not None and not streaming else path
    if source.rescued_data_column:
        lines = reader.format("text").options(**options).load(paths)
        return json_with_rescued_data(lines, source.rescued_data_column, schema, options)
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
    store = source_schemas.SchemaStore.of_target(
        spark, lakehouse.source_schemas(source.name), lakehouse.shared_source_schemas(source.name))
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


def json_with_rescued_data(
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

