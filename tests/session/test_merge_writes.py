"""Update mode's MERGE reads only the files that can hold the batch's keys, and still matches every key.

merge_batch is called as foreachBatch would call it, with small DataFrames for batches.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta

import pytest
from pyspark.sql import functions as F

from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.writes.merge import MATERIALIZE_SOURCE, merge_batch

SCHEMA = "merge_writes"
COLUMNS = "window struct<start: timestamp, end: timestamp>, device string, readings bigint"
KEY = ("window", "device")
T0 = datetime(2026, 1, 1, 12, 0)


@pytest.fixture
def table(spark, request):
    spark.sql(f"create schema if not exists {SCHEMA}")
    name = f"{SCHEMA}.{request.node.name}"
    spark.sql(f"drop table if exists {name}")
    spark.sql(f"create table {name} ({COLUMNS}) using delta "
              "tblproperties ('delta.enableDeletionVectors' = 'true')")
    yield name
    spark.sql(f"drop table if exists {name}")


def window(minute: int | None) -> tuple | None:
    return None if minute is None else (T0 + timedelta(minutes=minute), T0 + timedelta(minutes=minute + 1))


def frame(spark, rows: list[tuple]):
    return spark.createDataFrame([(window(minute), device, n) for minute, device, n in rows], COLUMNS)


def merge(spark, table: str, batch_id: int, rows: list[tuple]) -> None:
    merge_batch(frame(spark, rows), batch_id, "test-app", table, KEY)


def append(spark, table: str, rows: list[tuple]) -> None:
    """Rows in one new file, as an earlier batch would have left them (quicker than a MERGE)."""
    frame(spark, rows).coalesce(1).write.format("delta").mode("append").saveAsTable(table)


def files_holding(spark, table: str, minute: int, device: str | None = None) -> set[str]:
    rows = spark.table(table).where(F.col("window.start") == window(minute)[0])
    if device is not None:
        rows = rows.where(F.col("device") == device)
    return {row[0] for row in rows.select(F.input_file_name()).distinct().collect()}


def last_commit_metrics(spark, table: str, version: int) -> dict[str, str]:
    commits = delta_tables.commits_since(spark, table, version)
    assert [operation for operation, _ in commits] == ["MERGE"]
    return commits[0][1]


def test_a_batch_of_the_latest_window_reads_only_that_windows_files(spark, table):
    for minute in range(3):  # a file per window, as a stream's batches leave them: files by time
        append(spark, table, [(minute, "a", 1), (minute, "b", 1)])
    for path in files_holding(spark, table, 0):  # a MERGE that read this file now would fail
        os.remove(path.removeprefix("file:"))
    version = delta_tables.current_version(spark, table)

    merge(spark, table, 3, [(2, "a", 5), (3, "a", 1)])

    metrics = last_commit_metrics(spark, table, version)
    touched = int(metrics["numTargetDeletionVectorsAdded"]) + int(metrics["numTargetFilesRemoved"])
    assert touched == 1  # the file of window 2, given a deletion vector
    assert (metrics["numTargetRowsUpdated"], metrics["numTargetRowsInserted"]) == ("1", "1")
    rows = spark.table(table).where(F.col("window.start") >= window(2)[0]).orderBy("window", "device")
    assert [(row.device, row.readings) for row in rows.collect()] == [("a", 5), ("b", 1), ("a", 1)]


def test_null_keys_and_quotes_still_match_their_rows(spark, table):
    keys = [(None, "o'brien\\", 1), (0, None, 1), (None, None, 1), (1, "b", 1)]
    append(spark, table, keys)
    merge(spark, table, 1, [(minute, device, 7) for minute, device, _ in keys[:3]])
    rows = spark.table(table).collect()
    assert len(rows) == 4  # updated in place, none inserted twice
    assert sorted(row.readings for row in rows) == [1, 7, 7, 7]


def test_an_empty_batch_commits_nothing(spark, table):
    version = delta_tables.current_version(spark, table)
    merge(spark, table, 0, [])
    assert delta_tables.current_version(spark, table) == version


def test_a_replayed_batch_changes_nothing(spark, table):
    append(spark, table, [(0, "a", 1)])
    merge(spark, table, 1, [(0, "a", 7)])
    merge(spark, table, 1, [(0, "a", 9)])  # batch 1 again, as after a crash before its checkpoint
    assert [row.readings for row in spark.table(table).collect()] == [7]
    assert spark.conf.get(MATERIALIZE_SOURCE, None) is None  # the MERGE's setting did not stay
