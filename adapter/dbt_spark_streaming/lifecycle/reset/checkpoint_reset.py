"""Reset a model's checkpoint and keep its table: the next run reads its inputs from a chosen point.

For a checkpoint that was lost or corrupted, or an input that was replaced. The reset deletes
the model's checkpoint and writes what it decided into the empty folder (`_reset.json`):

- `now`: only input that arrives after the reset. For a Delta input (an upstream model read
  with stream(ref(...)), or a Delta source) the version it had at the reset is recorded, and the
  next run starts at the version after it; for Kafka and file sources the reset's time is.
- `version`: a Delta input's first version to read (Delta's startingVersion, inclusive).
- `timestamp`: for Delta inputs the first commit at or after it (startingTimestamp), for Kafka the
  first record at or after it (startingTimestamp), for file sources the files modified at or
  after it (`_metadata.file_modification_time`; Spark's modifiedAfter is for batch reads only).
- `offsets`: a Kafka source's startingOffsets, as Spark's JSON.

While the checkpoint has not planned a batch, each run of the model applies the record: its own
reads of its inputs get the starting options (a per-model view for sources, `with (...)` options
on its stream() reads), so other models reading the same source are untouched; and the table's
rows without a checkpoint are expected (checkpoints.check_matches_table). Once the stream has
progress the checkpoint is where to start and the record is moved aside (`_reset.applied.json`).
A full refresh deletes the checkpoint with the record: it starts over from the beginning.

Here the reset and its pending record are run; the parts are reset_arguments.py (the starting
point), reset_inputs.py (the model's streaming inputs), reset_record.py (`_reset.json`),
reset_offsets.py (Delta and Kafka starting options) and reset_reads.py (the SQL reading from them).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from pyspark.sql import SparkSession

from dbt_spark_streaming.config.model import read_model_config
from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.errors import root_cause
from dbt_spark_streaming.lifecycle import checkpoints
from dbt_spark_streaming.lifecycle.reset.reset_arguments import CheckpointResetError, StartingPoint, iso
from dbt_spark_streaming.lifecycle.reset.reset_inputs import check_point_fits, streaming_inputs
from dbt_spark_streaming.lifecycle.reset.reset_offsets import with_latest_version
from dbt_spark_streaming.lifecycle.reset.reset_reads import reading_from
from dbt_spark_streaming.lifecycle.reset.reset_record import APPLIED, RECORD, Input, Reset
from dbt_spark_streaming.session import claim_lakehouse_for

RESETTABLE_MATERIALIZATIONS = ("streaming_table", "cdc_table")


# ---------------------------------------------------------------------------------------------
# The reset (dbt run-operation reset_checkpoint)


def reset_model_checkpoint(
    spark: SparkSession, node: Mapping[str, Any], graph: Mapping[str, Any],
    run_vars: Mapping[str, Any], arguments: Mapping[str, Any], table: str, lakehouse: Any = None,
) -> str:
    """The reset `dbt run-operation reset_checkpoint` asks for; what was done, to print."""
    lakehouse = lakehouse or Lakehouse.from_env()
    config = read_model_config(node, graph, run_vars)
    point = StartingPoint.from_args(config.model, arguments)
    inputs = streaming_inputs(node, graph, config)
    claim_lakehouse_for(config.model, table)  # no dbt run or service is writing with this checkpoint
    reset = reset_checkpoint(spark, config, table, inputs, point, lakehouse.landing_path)
    return said(reset, config.checkpoint, table)


def said(reset: Reset, checkpoint: str, table: str) -> str:
    reads = "; ".join(f"{read.name}: {_starts(reset.point, read)}" for read in reset.inputs)
    return (f"Model {reset.model}: checkpoint {checkpoint} reset, table {table} keeps its rows. "
            f"Its next run starts reading from {reset.point.describe()} ({reads}).")


def _starts(point: StartingPoint, read: Input) -> str:
    if point.kind == "version":
        return f"version {point.version} on"
    if point.kind == "now" and read.is_delta:
        return f"commits after version {read.latest_version}"
    if point.kind == "offsets":
        return f"offsets {point.offsets}"
    moment = iso(point.timestamp_ms)
    if read.is_delta:
        return f"commits at or after {moment}"
    if read.kind == "kafka":
        return f"records timestamped at or after {moment}"
    return f"files modified at or after {moment}"


def reset_checkpoint(
    spark: SparkSession, config: Any, table: str, inputs: Sequence[Input], point: StartingPoint,
    landing_path=lambda path: path,
) -> Reset:
    """Check the starting point against the model's inputs, then delete the checkpoint and record
    the starting point in its folder. `landing_path` resolves a Delta source's path."""
    model = config.model
    if config.materialized not in RESETTABLE_MATERIALIZATIONS:
        raise CheckpointResetError(
            f"Model {model}: materialized {config.materialized!r} has no streaming checkpoint to "
            "reset (a copy_into model keeps a load log: reload files with force=true). Reset "
            f"applies to {', '.join(RESETTABLE_MATERIALIZATIONS)} models."
        )
    if config.changes is None and config.output_mode != "append":
        raise CheckpointResetError(
            f"Model {model}: output_mode {config.output_mode!r} writes aggregates of all the input "
            "read since the checkpoint began; after a reset the next batch would replace (complete) "
            "or overwrite by key (update) the table's rows with aggregates of the new input only. "
            f"Rebuild it from all input instead: `dbt run --full-refresh --select {model}`."
        )
    if not inputs:
        raise CheckpointResetError(
            f"Model {model}: no streaming input found in its SQL (stream(ref(...)), "
            "stream(source(...)) or a source with meta.stream), so there is no starting point to "
            f"set. Rebuild it instead: `dbt run --full-refresh --select {model}`."
        )
    resolved = tuple(with_latest_version(spark, read, landing_path) for read in inputs)
    check_point_fits(model, point, resolved)
    reset = Reset(model=model, point=point, inputs=resolved)
    checkpoints.delete(spark, config.checkpoint)
    hadoop_fs.write_text(spark, _record_path(config.checkpoint), reset.to_json())
    return reset


# ---------------------------------------------------------------------------------------------
# The next runs of the model


def pending(spark: SparkSession, checkpoint: str) -> Optional[Reset]:
    """The reset recorded in the checkpoint while the stream has not planned a batch; once it
    has, the record is moved aside (the checkpoint now says where the stream is)."""
    record = _record_path(checkpoint)
    if not hadoop_fs.exists(spark, record):
        return None
    text = hadoop_fs.read_text(spark, record)
    if checkpoints.has_progress(spark, checkpoint):
        hadoop_fs.write_text(spark, checkpoint.rstrip("/") + "/" + APPLIED, text)
        hadoop_fs.delete(spark, record)
        return None
    return Reset.from_json(text)


def waiting_for_input(spark: SparkSession, checkpoint: str, error: BaseException) -> bool:
    """A stream starting from a pending reset failed only because its first Delta version after
    the reset does not exist yet: nothing new since the reset, which stays pending."""
    return "DELTA_VERSION_NOT_FOUND" in root_cause(error) and pending(spark, checkpoint) is not None


def apply_to_query(
    spark: SparkSession, config: Any, sql: str, source_views: Any, lakehouse: Any,
) -> str:
    """The model's SQL reading from its pending reset's starting point (the SQL as it is when no
    reset is pending): its stream() reads get Delta options, its meta.stream sources a view of
    this model's own."""
    reset = pending(spark, config.checkpoint)
    if reset is None:
        return sql
    return reading_from(spark, reset, config, sql, source_views, lakehouse)


def _record_path(checkpoint: str) -> str:
    return checkpoint.rstrip("/") + "/" + RECORD
