"""COPY INTO for dbt: a model that loads the files of a folder that it has not loaded before.

The model's SQL selects from one file source; each run lists the source folder, loads the files
its load log does not name (or all of them with `force`), through the model's SQL, into a Delta
table. Files are known by path, as Databricks' COPY INTO knows them: a file changed after it was
loaded is not loaded again unless forced.

Crash safety: a load is planned in the log before the table is written, and its write carries a
Delta transaction (app id of the log, version = load id). A run that finds a planned load not
marked loaded writes that same load again first; if the crashed run had committed it, Delta skips
the write, so no file's rows land twice and none are left out.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from py4j.protocol import Py4JJavaError

from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.delta import catalog as streaming_catalog
from dbt_spark_streaming.delta import constraints as delta_constraints
from dbt_spark_streaming.config.contracts import with_not_null
from dbt_spark_streaming.config.expectations import ExpectationCounts, expectations_said
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.writes.expectation_checks import (
    check_rules, checked, kept_rows, model_columns, quarantined_rows,
)
from dbt_spark_streaming.writes.load_log import Load, LoadLog
from dbt_spark_streaming.session import claim_lakehouse_for
from dbt_spark_streaming.sources.views import (
    StreamSource, StreamSourceConfigError, landing_folder, source_frame,
)
from dbt_spark_streaming.errors import StreamingModelError, explain
from dbt_spark_streaming.writes.table_write import TableWrite


@dataclass(frozen=True)
class CopyInto(TableWrite):
    """A copy_into model's load: its checked config, the table it loads and its compiled SELECT
    (reading from the source's view)."""

    sql: str = ""

    @property
    def source(self) -> StreamSource:
        return self.config.copy_source.source

    @property
    def source_view(self) -> str:
        return copy_source_view(self.model, self.config.copy_source.name)

    @property
    def load_log(self) -> str:
        """Location of the load log's Delta table."""
        return self.config.checkpoint


@dataclass(frozen=True)
class CopySummary:
    files_loaded: int
    rows_loaded: int
    files_skipped: int
    redone_load: int | None
    seconds: float
    expectations: ExpectationCounts = ExpectationCounts()

    def message(self) -> str:
        files = "1 file" if self.files_loaded == 1 else f"{self.files_loaded} files"
        skipped = f", {self.files_skipped} loaded before" if self.files_skipped else ""
        redone = (f", finished load {self.redone_load} that an earlier run left unconfirmed"
                  if self.redone_load is not None else "")
        checked_rows = expectations_said(self.expectations)
        return f"COPIED {files} ({self.rows_loaded} rows{checked_rows}){skipped}{redone}"


def copy_source_view(model: str, source_name: str) -> str:
    """The temp view the model's SQL reads: one per model, as models may load in parallel threads."""
    return f"copy_into__{model}__{source_name.replace('.', '__')}"


def run_copy_into(spark: SparkSession, copy: CopyInto, lakehouse: Lakehouse) -> CopySummary:
    started = time.monotonic()
    try:
        folder = landing_folder(spark, copy.source, lakehouse)
    except StreamSourceConfigError as error:
        raise StreamingModelError(f"Model {copy.model}: {error}") from None
    claim_lakehouse_for(copy.model, copy.target_table)
    log = LoadLog(spark, copy.load_log)
    loads = log.loads()
    _check_log_matches_table(spark, copy, loads)
    log.create_if_missing()
    app_id = log.transaction_app_id()

    files_loaded = rows_loaded = 0
    counts = ExpectationCounts()
    pending = [load for load in loads if not load.loaded]
    redone = pending[-1] if pending else None
    if redone is not None:  # at most one: a run finishes or redoes it before planning another
        rows, load_counts = _write_load(spark, copy, lakehouse, log, app_id, redone)
        rows_loaded, counts = rows_loaded + rows, counts.plus(load_counts)
        files_loaded += len(redone.files)

    landed = hadoop_fs.list_data_files(spark, folder)
    known = {file.path for load in loads for file in load.files}
    # A forced load that was interrupted and is now finished was the forced reload asked for.
    force = copy.config.force and not (redone is not None and redone.forced)
    to_load = sorted(landed) if force else sorted(f for f in landed if f.path not in known)
    if to_load:
        next_id = max((load.load_id for load in loads), default=-1) + 1
        load = log.plan(next_id, to_load, forced=force)
        rows, load_counts = _write_load(spark, copy, lakehouse, log, app_id, load)
        rows_loaded, counts = rows_loaded + rows, counts.plus(load_counts)
        files_loaded += len(to_load)
    elif not delta_tables.snapshot(spark, copy.target_table).exists:
        _create_empty_table(spark, copy, lakehouse)

    table = delta_tables.snapshot(spark, copy.target_table)
    if table.exists:
        streaming_catalog.record(spark, copy.target_table, _properties(copy), current=table.properties)
    redone_paths = {f.path for f in redone.files} if redone is not None else set()
    return CopySummary(
        files_loaded=files_loaded,
        rows_loaded=rows_loaded,
        files_skipped=len({f.path for f in landed} - {f.path for f in to_load} - redone_paths),
        redone_load=redone.load_id if redone is not None else None,
        seconds=round(time.monotonic() - started, 3),
        expectations=counts,
    )


def _write_load(
    spark: SparkSession, copy: CopyInto, lakehouse: Lakehouse, log: LoadLog, app_id: str, load: Load
) -> tuple[int, ExpectationCounts]:
    """Write one load's files through the model's SQL (and its expectations); Delta skips each
    write that was committed before. Returns the rows written and the expectations' counts."""
    counts = ExpectationCounts()
    loaded = None
    try:
        source = source_frame(
            spark, copy.source, lakehouse, streaming=False, files=[f.path for f in load.files]
        )
        source.createOrReplaceTempView(copy.source_view)
        frame = spark.sql(copy.sql)
        delta_constraints.check_query(spark, copy.config.contract, frame.schema)
        if copy.config.expectations:
            check_rules(frame, copy.config.expectations)
            observation = Observation(f"expectations_load_{load.load_id}")
            loaded = checked(frame, copy.config.expectations, observation).persist()
            loaded.count()  # the load's query and its rules, once (a fail rule raises here)
            counts = ExpectationCounts.from_metrics(observation.get)
            frame = kept_rows(loaded)
            if copy.quarantine_table is not None:
                _append(quarantined_rows(loaded), copy.quarantine_table, app_id, load, merge_schema=True)
        before = delta_tables.snapshot(spark, copy.target_table)
        delta_tables.create_if_missing(
            spark, copy.target_table, with_not_null(model_columns(frame).schema, copy.config.contract),
            copy.config.partition_by, _properties(copy), exists=before.exists,
        )
        delta_constraints.add_missing(spark, copy.target_table, copy.config.contract)
        _append(frame, copy.target_table, app_id, load, merge_schema=copy.config.append_new_columns)
    except (PySparkException, Py4JJavaError) as error:
        raise explain(copy.model, error) from None
    finally:
        if loaded is not None:
            loaded.unpersist()
    rows = delta_tables.rows_written_since(spark, copy.target_table, before.version)
    log.mark_loaded(load.load_id, rows)
    return rows, counts


def _append(frame: DataFrame, table: str, app_id: str, load: Load, merge_schema: bool) -> None:
    """One load's rows into `table` under the load's Delta transaction (the same id on each
    table: Delta keeps a table's transactions apart)."""
    writer = (
        frame.write.format("delta").mode("append")
        .option("txnAppId", app_id).option("txnVersion", load.load_id)
    )
    if merge_schema:
        writer = writer.option("mergeSchema", "true")
    writer.saveAsTable(table)


def _create_empty_table(spark: SparkSession, copy: CopyInto, lakehouse: Lakehouse) -> None:
    """Nothing landed yet: create the table from the model's columns, so downstream models can
    select from it. Without a declared schema there are no columns to create it with yet."""
    if not copy.source.schema:
        return
    empty: DataFrame = source_frame(spark, copy.source, lakehouse, streaming=False).where(F.lit(False))
    empty.createOrReplaceTempView(copy.source_view)
    frame = spark.sql(copy.sql)
    delta_constraints.check_query(spark, copy.config.contract, frame.schema)
    delta_tables.create_if_missing(
        spark, copy.target_table, with_not_null(frame.schema, copy.config.contract), copy.config.partition_by,
        _properties(copy),
    )
    delta_constraints.add_missing(spark, copy.target_table, copy.config.contract)


def _properties(copy: CopyInto) -> dict[str, str]:
    return {**copy.config.tblproperties, **copy.config.documented()}


def _check_log_matches_table(spark: SparkSession, copy: CopyInto, loads: list[Load]) -> None:
    """A log without its table (or the reverse) would skip files or load them twice: stop."""
    table_exists = spark.catalog.tableExists(copy.target_table)
    loaded_before = any(load.loaded for load in loads)
    if loaded_before and not table_exists:
        raise StreamingModelError(
            f"Model {copy.model}: its load log {copy.load_log} records loaded files but table "
            f"{copy.target_table} is gone, so those files would never be loaded again. Reload "
            f"everything with `dbt run --full-refresh --select {copy.model}`."
        )
    if table_exists and not loads and not spark.table(copy.target_table).isEmpty():
        raise StreamingModelError(
            f"Model {copy.model}: table {copy.target_table} has data but its load log "
            f"{copy.load_log} is missing or empty, so every file would be loaded again. Restore "
            f"the log, or reload everything with `dbt run --full-refresh --select {copy.model}`."
        )
