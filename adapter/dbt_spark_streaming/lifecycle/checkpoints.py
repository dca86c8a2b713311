"""Checkpoint folders: where a model's stream records what it has processed.

A checkpoint and its table belong together: the checkpoint says which input is already in the
table. One without the other means either rows would be processed twice (table kept, checkpoint
gone) or rows would be skipped (checkpoint kept, table gone), so both cases stop the run.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.lifecycle.query_inputs import FILE as QUERY_INPUTS
from dbt_spark_streaming.lifecycle.reset.reset_record import RECORD
from dbt_spark_streaming.lifecycle.up_to_date import RECORDED_MARKER

# The project's own files at a checkpoint folder's top, beside Spark's entries (Spark reads only
# its own): a reset waiting to start, the inputs the query resolved to, the last idle batch recorded.
OWN_ENTRIES = frozenset({RECORD, QUERY_INPUTS, RECORDED_MARKER})


def has_progress(spark: SparkSession, location: str) -> bool:
    """True once a stream has planned at least one batch in the checkpoint."""
    return bool(hadoop_fs.list_names(spark, location.rstrip("/") + "/offsets"))


def is_sparks(relative_path: str) -> bool:
    """Whether a path inside a checkpoint folder is Spark's (or its checksum), not one of ours."""
    name = relative_path.rstrip("/")
    if name.startswith(".") and name.endswith(".crc"):
        name = name[1:-len(".crc")]
    return name not in OWN_ENTRIES


def delete(spark: SparkSession, location: str) -> None:
    hadoop_fs.delete(spark, location)


def check_matches_table(
    spark: SparkSession, model: str, table: str, location: str, table_exists: bool | None = None
) -> None:
    """`table_exists`: already known by the caller, saves asking the catalog."""
    if table_exists is None:
        table_exists = spark.catalog.tableExists(table)
    checkpoint_exists = has_progress(spark, location)
    if not checkpoint_exists and _reset_recorded(spark, location):
        return  # reset-checkpoint said where the stream starts (checkpoint_reset.py)
    if table_exists and not checkpoint_exists and _has_rows(spark, table):
        raise StreamingModelError(
            f"Model {model}: table {table} has data but its checkpoint {location} is missing or "
            f"empty, so the stream would process every input again and duplicate rows. Restore "
            f"the checkpoint, or rebuild the model and the models that stream from it with "
            f"`dbt run --full-refresh --select {model}+`, or keep the rows and say where the "
            f"stream starts: `dbt run-operation reset_checkpoint --args '{{select: {model}, from_now: true}}'` "
            f"(or from_version / from_timestamp)."
        )
    if checkpoint_exists and not table_exists:
        raise StreamingModelError(
            f"Model {model}: checkpoint {location} records processed input but table {table} is "
            f"gone, so that input would never be written again. Rebuild the model and the "
            f"models that stream from it with `dbt run --full-refresh --select {model}+`."
        )


def _reset_recorded(spark: SparkSession, location: str) -> bool:
    return hadoop_fs.exists(spark, location.rstrip("/") + "/" + RECORD)


def _has_rows(spark: SparkSession, table: str) -> bool:
    return len(spark.table(table).limit(1).collect()) > 0
