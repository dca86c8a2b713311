"""A Kafka topic declared as a dbt source, read by a streaming model: exactly once across a kill -9.

Produce N, `dbt run`; produce M, start `dbt run` and SIGKILL it (dbt and its JVM) as soon as its
first new Delta commit appears; `dbt run` again: N + M rows, each once. dbt runs as its own
process on a lakehouse of its own (one Derby metastore per JVM), against a real broker.
"""

from __future__ import annotations

import json

import pytest

from python_runners.infra.kafka_broker import KafkaBroker
from python_runners.testing.killed_runs import KilledRuns
from dbt_results import failure_messages
from streaming_projects import write_streaming_project

pytestmark = pytest.mark.kafka
FIRST, SECOND = 200, 300
PER_BATCH = 50
TIMEOUT = 300

SOURCES = f"""
version: 2
sources:
  - name: bus
    tables:
      - name: recordings
        meta:
          stream:
            format: kafka
            bootstrap_servers: "{{{{ env_var('KAFKA_BOOTSTRAP_SERVERS') }}}}"
            topic: recordings
            max_offsets_per_trigger: {PER_BATCH}
"""

MODEL = """
with messages as (
    select * from {{ source('bus', 'recordings') }}
),

parsed as (
    select
        from_json(cast(value as string), 'id int, device string, heartbeat double') as record,
        partition,
        offset
    from messages
)

select record.id, record.device, record.heartbeat, partition, offset from parsed
"""


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with KafkaBroker(tmp_path_factory.mktemp("kafka")) as running:
        running.create_topic("recordings", partitions=2)
        yield running


def produce(spark, broker: KafkaBroker, ids: range) -> None:
    messages = [(str(i), json.dumps({"id": i, "device": f"d{i % 4}", "heartbeat": 60.0 + i % 30}))
                for i in ids]
    (
        spark.createDataFrame(messages, "key string, value string").write.format("kafka")
        .option("kafka.bootstrap.servers", broker.bootstrap_servers)
        .option("topic", "recordings")
        .save()
    )


def test_kafka_to_delta_exactly_once_across_a_kill(spark, broker, tmp_path):
    project = write_streaming_project(
        tmp_path / "project", "kafka_ingest", "kafka_in", {"kafka_recordings": MODEL}, SOURCES
    )
    runs = KilledRuns(project, "kafka_in", tmp_path, TIMEOUT, KAFKA_BOOTSTRAP_SERVERS=broker.bootstrap_servers)
    table = runs.table("kafka_recordings")

    produce(spark, broker, range(FIRST))
    first = runs.run("first")
    assert first.log_contains(f"STREAMED {FIRST} rows in, {FIRST} written")

    produce(spark, broker, range(FIRST, FIRST + SECOND))
    runs.killed_on_commit("killed", "kafka_recordings")
    rows_at_kill = spark.read.format("delta").load(str(table)).count()
    assert FIRST < rows_at_kill < FIRST + SECOND, "the kill interrupted the run midway"

    runs.run("again")

    landed = spark.read.format("delta").load(str(table))
    ids = [row.id for row in landed.select("id").collect()]
    assert sorted(ids) == list(range(FIRST + SECOND))  # every message, each once
    assert {row.partition for row in landed.select("partition").distinct().collect()} == {0, 1}


def test_a_model_that_is_not_streaming_reads_the_whole_topic_as_a_batch(
    dbt, spark, broker, tmp_path, monkeypatch
):
    broker.create_topic("snapshot", partitions=2)
    messages = [(str(i), json.dumps({"id": i})) for i in range(3 * PER_BATCH)]
    (
        spark.createDataFrame(messages, "key string, value string").write.format("kafka")
        .option("kafka.bootstrap.servers", broker.bootstrap_servers)
        .option("topic", "snapshot")
        .save()
    )
    project = write_streaming_project(tmp_path / "project", "kafka_batch", "kafka_batch", {
        "topic_snapshot": (
            "{{ config(materialized='table') }}\n"
            "select from_json(cast(value as string), 'id int').id as id\n"
            "from {{ source('bus', 'recordings') }}"
        ),
    }, SOURCES.replace("topic: recordings", "topic: snapshot"))
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", broker.bootstrap_servers)

    result = dbt("run", project_dir=str(project))

    assert result.success, failure_messages(result)
    ids = sorted(row.id for row in spark.table("kafka_batch.topic_snapshot").collect())
    assert ids == list(range(3 * PER_BATCH))  # earliest to latest, not capped at max_offsets_per_trigger
