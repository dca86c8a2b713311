"""foreachBatch writes are exactly-once: a batch replayed after a crash is not written twice.

A crash between a batch's Delta commit and its checkpoint commit leaves the checkpoint without
`commits/<batch>`; removing that file reproduces the state exactly, so the next run replays it.
"""

from __future__ import annotations

import json
import os

import pytest

from dbt_spark_streaming.writes.batch_marks import batch_mark, recorded_batch
from dbt_spark_streaming.writes.idempotent_batches import appending_once, delta_transaction, once_per_batch

SCHEMA = "idempotency"


@pytest.fixture
def source(spark, tmp_path):
    path = str(tmp_path / "source")
    spark.range(0, 30).selectExpr("id", "id % 3 as key").write.format("delta").save(path)
    return path


@pytest.fixture
def target(spark, request):
    spark.sql(f"create schema if not exists {SCHEMA}")
    table = f"{SCHEMA}.{request.node.name.replace('[', '_').replace(']', '')}"
    spark.sql(f"drop table if exists {table}")
    yield table
    spark.sql(f"drop table if exists {table}")


def run_stream(spark, source: str, checkpoint: str, write, seen: list[int]) -> None:
    def recording(batch, batch_id):
        seen.append(batch_id)
        write(batch, batch_id)

    query = (
        spark.readStream.name("input").format("delta").load(source).writeStream
        .foreachBatch(recording).option("checkpointLocation", checkpoint)
        .trigger(availableNow=True).start()
    )
    query.awaitTermination()


def crash_before_checkpoint_commit(checkpoint: str, batch_id: int) -> None:
    os.remove(f"{checkpoint}/commits/{batch_id}")


def assert_replay_appends_nothing(spark, source: str, checkpoint: str, table: str) -> None:
    """Batch 0 (30 rows, already in the table) replayed as after a crash: handed over, not added."""
    crash_before_checkpoint_commit(checkpoint, 0)
    seen: list[int] = []
    run_stream(spark, source, checkpoint, appending_once(checkpoint, table), seen)
    assert seen == [0]
    assert spark.read.format("delta").load(table).count() == 30


def test_a_replayed_append_is_skipped(spark, source, tmp_path):
    checkpoint, table = str(tmp_path / "checkpoint"), str(tmp_path / "table")
    seen: list[int] = []
    run_stream(spark, source, checkpoint, appending_once(checkpoint, table), seen)
    assert seen == [0]
    assert spark.read.format("delta").load(table).count() == 30

    crash_before_checkpoint_commit(checkpoint, 0)
    run_stream(spark, source, checkpoint, appending_once(checkpoint, table), seen)
    assert seen == [0, 0]  # Spark did hand the batch over again
    assert spark.read.format("delta").load(table).count() == 30
    assert spark.read.format("delta").load(table).select("id").distinct().count() == 30


def test_a_replay_is_found_past_other_commits(spark, source, tmp_path):
    """An OPTIMIZE between the batch's commit and the restart does not hide the batch."""
    checkpoint, table = str(tmp_path / "checkpoint"), str(tmp_path / "table")
    run_stream(spark, source, checkpoint, appending_once(checkpoint, table), [])
    spark.sql(f"optimize delta.`{table}`")
    spark.sql(f"alter table delta.`{table}` set tblproperties ('note' = 'x')")
    assert_replay_appends_nothing(spark, source, checkpoint, table)


def test_a_batch_delta_sink_wrote_is_not_appended_again(spark, source, tmp_path):
    """A checkpoint that Delta's own streaming sink wrote to (its txn action, not our mark)."""
    checkpoint, table = str(tmp_path / "checkpoint"), str(tmp_path / "table")
    (spark.readStream.name("input").format("delta").load(source).writeStream.format("delta")
     .option("checkpointLocation", checkpoint).trigger(availableNow=True).start(table)
     .awaitTermination())
    assert_replay_appends_nothing(spark, source, checkpoint, table)


def test_a_new_checkpoint_is_not_mistaken_for_a_replay(spark, source, tmp_path):
    first, second, table = str(tmp_path / "first"), str(tmp_path / "second"), str(tmp_path / "table")
    run_stream(spark, source, first, appending_once(first, table), [])
    seen: list[int] = []
    run_stream(spark, source, second, appending_once(second, table), seen)
    assert seen == [0]  # batch 0 again, from a checkpoint that has not written it
    assert spark.read.format("delta").load(table).count() == 60


def test_a_commit_records_its_query_and_batch_either_way():
    marked = json.dumps({"commitInfo": {"operation": "WRITE", "userMetadata": batch_mark("q1", 7)}})
    by_delta = json.dumps({"txn": {"appId": "q2", "version": 3, "lastUpdated": 0}})
    other = json.dumps({"commitInfo": {"operation": "OPTIMIZE", "userMetadata": "nightly"}})
    assert recorded_batch(f"{marked}\n{{}}") == ("q1", 7)
    assert recorded_batch(f"{{}}\n{by_delta}\n{other}") == ("q2", 3)
    assert recorded_batch(other) is None


def test_a_replayed_merge_is_skipped(spark, source, target, tmp_path):
    """A MERGE that adds to counters is not idempotent by itself: replayed, it would double them."""
    spark.sql(f"create table {target} (key bigint, n bigint) using delta")
    checkpoint = str(tmp_path / "checkpoint")

    def merge_counts(batch, batch_id, app_id):
        session = batch.sparkSession
        batch.groupBy("key").count().createOrReplaceTempView("batch_counts")
        with delta_transaction(session, app_id, batch_id):
            session.sql(f"""
                merge into {target} t using batch_counts s on t.key = s.key
                when matched then update set n = t.n + s.count
                when not matched then insert (key, n) values (s.key, s.count)
            """)

    seen: list[int] = []
    run_stream(spark, source, checkpoint, once_per_batch(checkpoint, merge_counts), seen)
    crash_before_checkpoint_commit(checkpoint, 0)
    run_stream(spark, source, checkpoint, once_per_batch(checkpoint, merge_counts), seen)
    assert seen == [0, 0]
    assert sorted(tuple(r) for r in spark.table(target).collect()) == [(0, 10), (1, 10), (2, 10)]
    assert spark.conf.get("spark.databricks.delta.write.txnAppId", None) is None
