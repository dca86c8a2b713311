"""One availableNow catch-up of a StreamingWrite, timed from the query's progress and the wall clock."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from bench.harness.rows_read import rows_read_by_run
from dbt_spark_streaming.delta import log as delta_log, tables as delta_tables
from dbt_spark_streaming.errors import explain
from dbt_spark_streaming.progress.batch import batches_of
from dbt_spark_streaming.writes.streaming import StreamingWrite, start_streaming_write


@dataclass(frozen=True)
class CatchUp:
    trigger_execution_ms: tuple[int, ...]  # one per micro-batch that wrote (had an addBatch)
    add_batch_ms: tuple[int, ...]
    wall_ms: float  # start_streaming_write until the query has stopped
    rows_written: int  # rows the commits of this catch-up changed or added (delta_tables' count)
    rows_rewritten: int  # rows in the data files they wrote, including unchanged rows copied along
    files_touched: int = 0  # data files the commits removed or gave a deletion vector
    table_files: int = 0  # data files in the table afterwards
    rows_read: Optional[int] = None  # rows the run's jobs read from data files (bench/harness/rows_read.py)

    @property
    def batches(self) -> int:
        return len(self.trigger_execution_ms)


def run_to_end(spark: SparkSession, write: StreamingWrite, **start_options) -> StreamingQuery:
    """The write's query started and run until it stops; its failure explained as the runtime does."""
    query = start_streaming_write(spark, write, **start_options)
    try:
        query.awaitTermination()
    except (PySparkException, Py4JJavaError) as error:
        raise explain(write.model, error) from None
    return query


def timed_catch_up(spark: SparkSession, write: StreamingWrite) -> CatchUp:
    """A model run's catch-up leg (run/model_run.py), kept here because its summary drops the query's progress."""
    if not write.trigger.runs_until_caught_up:
        raise ValueError(f"{write.model}: a timed catch-up needs a trigger that stops by itself")
    version_before = delta_tables.current_version(spark, write.target_table)
    started = time.perf_counter()
    query = run_to_end(spark, write)
    wall_ms = (time.perf_counter() - started) * 1000
    durations = [batch.durations_ms for batch in batches_of(query)]
    return CatchUp(
        trigger_execution_ms=tuple(int(d["triggerExecution"]) for d in durations),
        add_batch_ms=tuple(int(d["addBatch"]) for d in durations),
        wall_ms=wall_ms,
        rows_written=delta_tables.rows_written_since(spark, write.target_table, version_before),
        rows_rewritten=rows_in_files_written_since(spark, write.target_table, version_before),
        files_touched=files_touched_since(spark, write.target_table, version_before),
        table_files=table_files(spark, write.target_table),
        rows_read=rows_read_by_run(spark, str(query.runId)),
    )


def rows_in_files_written_since(spark: SparkSession, table: str, version: int) -> int:
    """Delta's numOutputRows per commit; for a MERGE it also counts the rows it copied unchanged.

    A MERGE rewrites each data file holding a matched key, so this shows how much of the table a
    small update really rewrote.
    """
    return sum(
        int(metrics.get("numOutputRows", 0))
        for _, metrics in delta_tables.commits_since(spark, table, version)
    )


def files_touched_since(spark: SparkSession, table: str, version: int) -> int:
    """Data files that the commits after `version` rewrote or marked rows deleted in.

    A MERGE without deletion vectors removes (rewrites) each file holding a matched key; with
    them it adds a deletion vector to the file instead. A complete-mode batch removes them all.
    """
    return sum(
        int(metrics.get("numTargetFilesRemoved", 0)) + int(metrics.get("numTargetDeletionVectorsAdded", 0))
        if operation == "MERGE" else int(metrics.get("numRemovedFiles", 0))
        for operation, metrics in delta_tables.commits_since(spark, table, version)
    )


def table_files(spark: SparkSession, table: str) -> int:
    """Data files in the table's latest snapshot, from its Delta log."""
    log = delta_tables.log_handle(spark, table)
    return int(delta_log.current(spark, log).numOfFiles()) if log is not None else 0
