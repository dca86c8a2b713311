"""A stream over a Delta table does not rebuild the table's initial snapshot at each start.

After a first run (or a full refresh) the last committed batch of a stream over a Delta table
began inside the table's initial snapshot; each start replays that batch's getBatch, and Delta
rebuilds the whole snapshot for it. adapter/dbt_spark_streaming/sources/initial_snapshot.py plans an empty batch
after it, which the next start runs at no cost; rows stay exact across restarts.
"""

from __future__ import annotations

import json
import uuid

import pytest

from dbt_spark_streaming.jvm.checkpoint_log import source_offsets
from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.sources.initial_snapshot import plan_batch_past_initial_snapshot, started_in_initial_snapshot

SCHEMA = "initial_snapshot"
KEYS = 7


@pytest.fixture(scope="module")
def schema(spark):
    spark.sql(f"create database if not exists {SCHEMA}")
    return SCHEMA


def append(spark, table: str, first: int, count: int, files: int) -> None:
    (spark.range(first, first + count, numPartitions=files)
     .selectExpr("id", f"id % {KEYS} as k")
     .write.format("delta").mode("append").saveAsTable(table))


def offset_log(spark, checkpoint: str, batch: int) -> list[str]:
    return hadoop_fs.read_text(spark, f"{checkpoint}/offsets/{batch}").split("\n")


def batch_ids(spark, checkpoint: str, log: str) -> list[int]:
    return sorted(int(n) for n in hadoop_fs.list_names(spark, f"{checkpoint}/{log}") if n.isdigit())


def replayed_at_start_reads_snapshot(spark, checkpoint: str) -> bool:
    """Whether the batch the next start replays (the last one in the offset log, committed or
    not) begins inside a Delta source's initial snapshot: the replay then rebuilds it."""
    last = batch_ids(spark, checkpoint, "offsets")[-1]
    start = offset_log(spark, checkpoint, last - 1) if last > 0 else None
    return started_in_initial_snapshot(start, offset_log(spark, checkpoint, last))


def run(spark, source: str, target: str, checkpoint: str, aggregate: bool, options: dict):
    stream = spark.readStream.name("input").options(**options).table(source)
    writer = stream.writeStream
    if aggregate:
        stream = stream.groupBy("k").count()
        writer = stream.writeStream.outputMode("complete")
    query = (writer.format("delta").option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).toTable(target))
    query.awaitTermination()
    return query


@pytest.mark.parametrize(
    "aggregate,options",
    [
        (False, {}),                            # the snapshot in one batch (no start offset)
        (False, {"maxFilesPerTrigger": "4"}),   # in several: the last one starts inside it
        (True, {"maxFilesPerTrigger": "4"}),    # stateful: the empty batch moves the state on
    ],
    ids=["append-one-batch", "append-several-batches", "complete-aggregate"],
)
def test_restart_after_first_run_does_not_read_the_snapshot_again(
    spark, schema, tmp_path, aggregate, options
):
    name = f"t_{uuid.uuid4().hex[:8]}"
    source, target = f"{schema}.{name}_src", f"{schema}.{name}_dst"
    checkpoint = str(tmp_path / "checkpoint")
    for i in range(3):
        append(spark, source, i * 300, 300, files=4)  # 12 files over 3 versions

    run(spark, source, target, checkpoint, aggregate, options)
    assert replayed_at_start_reads_snapshot(spark, checkpoint)  # what Delta leaves
    last = batch_ids(spark, checkpoint, "commits")[-1]
    if options:
        first_offset = json.loads(source_offsets(offset_log(spark, checkpoint, 0))["input"])
        assert first_offset["isStartingVersion"] is True  # the run was cut inside the snapshot

    assert plan_batch_past_initial_snapshot(spark, checkpoint)
    assert batch_ids(spark, checkpoint, "offsets")[-1] == last + 1
    # Without state it is committed too (nothing to run); with state the next start runs it.
    assert batch_ids(spark, checkpoint, "commits")[-1] == (last if aggregate else last + 1)
    assert not replayed_at_start_reads_snapshot(spark, checkpoint)
    committed = json.loads(hadoop_fs.read_text(spark, f"{checkpoint}/commits/{last}").split("\n")[1])
    planned = json.loads(offset_log(spark, checkpoint, last + 1)[1])
    assert planned["batchWatermarkMs"] == committed["nextBatchWatermarkMs"]
    assert not plan_batch_past_initial_snapshot(spark, checkpoint)  # once is enough

    # Restart with nothing new: the planned batch runs, empty (stateful), or there is nothing
    # to run; nothing is read again.
    query = run(spark, source, target, checkpoint, aggregate, options)
    assert sum(p["numInputRows"] for p in query.recentProgress) == 0
    assert batch_ids(spark, checkpoint, "commits")[-1] == last + 1
    assert batch_ids(spark, checkpoint, "offsets")[-1] == last + 1
    assert not replayed_at_start_reads_snapshot(spark, checkpoint)
    assert not plan_batch_past_initial_snapshot(spark, checkpoint)
    assert_exact(spark, source, target, aggregate)

    # Restart with 1% new rows: read once, nothing lost or doubled.
    append(spark, source, 900, 9, files=1)
    query = run(spark, source, target, checkpoint, aggregate, options)
    assert sum(p["numInputRows"] for p in query.recentProgress) == 9
    assert not plan_batch_past_initial_snapshot(spark, checkpoint)
    assert_exact(spark, source, target, aggregate)


def assert_exact(spark, source: str, target: str, aggregate: bool) -> None:
    expected = spark.table(source)
    if aggregate:
        expected = expected.groupBy("k").count()
    actual = spark.table(target)
    assert actual.count() == expected.count()
    assert actual.exceptAll(expected).count() == 0
    assert expected.exceptAll(actual).count() == 0


def test_a_batch_after_the_snapshot_is_left_alone():
    """Only a batch that began with no offset or inside a Delta snapshot is followed by one."""
    delta = '{"sourceVersion":1,"reservoirId":"r","reservoirVersion":%d,"index":%d,"isStartingVersion":%s}'
    header = ["v1", '{"batchWatermarkMs":0,"batchTimestampMs":1}']
    after_snapshot = header + [delta % (5, -1, "false")]
    assert started_in_initial_snapshot(None, after_snapshot)
    assert started_in_initial_snapshot(header + [delta % (4, 999, "true")], after_snapshot)
    assert not started_in_initial_snapshot(after_snapshot, header + [delta % (6, -1, "false")])
    assert not started_in_initial_snapshot(after_snapshot, after_snapshot)
    files = header + ['{"logOffset":3}']  # a file source: its replay is cheap
    assert not started_in_initial_snapshot(None, files)
    assert started_in_initial_snapshot(header + ["-", '{"logOffset":3}'],
                                       header + [delta % (5, -1, "false"), '{"logOffset":3}'])
