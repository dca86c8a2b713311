"""A real Kafka broker on loopback feeding a Structured Streaming query that writes to Delta.

The broker is Kafka's own release (KRaft, one node) from the jars `make kafka-jars` fetches; the
reader is Spark's Kafka connector on the project's session. Each message lands in Delta once,
also when a restart replays a batch whose Delta commit had already happened.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pytest

from python_runners.infra.kafka_broker import KafkaBroker, KafkaBrokerError
from python_runners.infra.kafka_broker_jars import KafkaBrokerJarsMissingError

pytestmark = pytest.mark.kafka
PAYLOAD_SCHEMA = "id int, device string, heartbeat double"


def payload(i: int) -> dict:
    return {"id": i, "device": f"device-{i % 3}", "heartbeat": 60 + i / 2}


def produce(spark, broker: KafkaBroker, topic: str, ids: range) -> None:
    """Through Spark's own Kafka sink: the test needs no Kafka client of its own."""
    messages = [(str(i), json.dumps(payload(i))) for i in ids]
    (
        spark.createDataFrame(messages, "key string, value string").write.format("kafka")
        .option("kafka.bootstrap.servers", broker.bootstrap_servers)
        .option("topic", topic)
        .save()
    )


def stream_into_delta(spark, broker: KafkaBroker, topic: str, table: Path, checkpoint: Path):
    """One availableNow run: what the topic holds past the checkpoint, parsed in SQL, into Delta."""
    (
        spark.readStream.name("input").format("kafka")
        .option("kafka.bootstrap.servers", broker.bootstrap_servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "20")
        .load()
        .createOrReplaceTempView("kafka_recordings")
    )
    parsed = spark.sql(
        f"""
        select record.*, partition, offset
        from (
            select from_json(cast(value as string), '{PAYLOAD_SCHEMA}') as record, partition, offset
            from kafka_recordings
        )
        """
    )
    query = (
        parsed.writeStream.format("delta")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start(str(table))
    )
    query.awaitTermination()
    return {progress["batchId"]: progress["numInputRows"] for progress in query.recentProgress}


def processes_mentioning(text: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text.encode() in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            continue  # exited while we looked
    return pids


def test_kafka_messages_land_in_delta_once_across_a_restart(spark, tmp_path):
    table, checkpoint = tmp_path / "recordings", tmp_path / "checkpoint"
    started = time.monotonic()
    with KafkaBroker(tmp_path / "kafka") as broker:
        print(f"\nKafka broker started in {time.monotonic() - started:.1f} s")
        broker_pid = broker.process.pid
        broker.create_topic("recordings", partitions=2)

        produce(spark, broker, "recordings", range(30))
        first_run = stream_into_delta(spark, broker, "recordings", table, checkpoint)
        assert sum(first_run.values()) == 30
        assert max(first_run.values()) <= 20, "maxOffsetsPerTrigger splits the run into batches"

        # As if the run was killed after its last Delta commit, before the checkpoint recorded it:
        # the restart runs that batch again over the same Kafka offsets, and Delta's sink, seeing
        # the batch committed already, skips it.
        last_batch = max(first_run)
        (checkpoint / "commits" / str(last_batch)).unlink()
        produce(spark, broker, "recordings", range(30, 50))
        second_run = stream_into_delta(spark, broker, "recordings", table, checkpoint)
        assert last_batch in second_run, "the restart runs the batch again"

        landed = spark.read.format("delta").load(str(table))
        assert landed.count() == 50
        assert {row.partition for row in landed.select("partition").collect()} == {0, 1}
        records = sorted(
            (row.asDict() for row in landed.select("id", "device", "heartbeat").collect()),
            key=lambda record: record["id"],
        )
        assert records == [payload(i) for i in range(50)]

    assert broker.process is None
    with pytest.raises(ProcessLookupError):
        os.kill(broker_pid, 0)
    assert processes_mentioning(str(tmp_path / "kafka")) == []


def test_a_broker_that_cannot_start_shows_the_end_of_its_log(tmp_path):
    with socket.socket() as taken, socket.socket() as also_taken:
        for sock in (taken, also_taken):
            sock.bind(("127.0.0.1", 0))
            sock.listen()
        broker_address = "127.0.0.1:%d" % taken.getsockname()[1]
        controller_address = "127.0.0.1:%d" % also_taken.getsockname()[1]
        listeners = f"PLAINTEXT://{broker_address},CONTROLLER://{controller_address}"
        broker = KafkaBroker(tmp_path / "kafka", overrides={
            "listeners": listeners,
            "advertised.listeners": listeners,
            "controller.quorum.bootstrap.servers": controller_address,
        })
        with pytest.raises(KafkaBrokerError, match="exited with code") as failure:
            broker.start()
    assert f"Its errors, from {broker.log_file}" in str(failure.value)
    assert "Address already in use" in str(failure.value)
    assert processes_mentioning(str(tmp_path / "kafka")) == []


def test_missing_broker_jars_name_the_make_target(tmp_path):
    with pytest.raises(KafkaBrokerJarsMissingError, match="make kafka-jars"):
        KafkaBroker(tmp_path / "kafka", jars_dir=tmp_path / "no-jars")
