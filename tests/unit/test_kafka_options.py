"""A Kafka topic as a source: the YAML settings turned into connector options, and each mistake
named with its fix (adapter/dbt_spark_streaming/config/kafka.py)."""

from __future__ import annotations

import pytest

from dbt_spark_streaming.config.kafka import KafkaSourceConfigError, batch_read_options, kafka_options

NAME = "events.readings"


def refused(**meta) -> str:
    with pytest.raises(KafkaSourceConfigError) as error:
        kafka_options(NAME, meta)
    message = str(error.value)
    assert message.startswith(f"Source {NAME}: "), message
    return message


def test_a_topic_is_subscribed_from_the_earliest_offset():
    assert kafka_options(NAME, {"bootstrap_servers": "a:9092,b:9092", "topic": "readings"}) == {
        "kafka.bootstrap.servers": "a:9092,b:9092", "subscribe": "readings", "startingOffsets": "earliest",
    }


def test_a_topic_pattern_a_start_and_a_cap_per_batch():
    options = kafka_options(NAME, {
        "bootstrap_servers": "a:9092", "topic_pattern": "readings-.*", "starting_offsets": "latest",
        "max_offsets_per_trigger": 500,
    })
    assert options == {
        "kafka.bootstrap.servers": "a:9092", "subscribePattern": "readings-.*", "startingOffsets": "latest",
        "maxOffsetsPerTrigger": "500",
    }


def test_missing_brokers_says_how_to_give_them():
    message = refused(topic="readings")
    assert "meta.stream.bootstrap_servers is missing; give the brokers as host:port[,host:port]" in message
    assert "env_var('KAFKA_BOOTSTRAP_SERVERS')" in message


@pytest.mark.parametrize("topics", [{}, {"topic": "a", "topic_pattern": "a.*"}, {"topic": ""}])
def test_exactly_one_of_topic_and_topic_pattern(topics):
    message = refused(bootstrap_servers="a:9092", **topics)
    assert "give exactly one of meta.stream.topic (a name, or names separated by commas)" in message
    assert "meta.stream.topic_pattern (a regular expression)" in message


@pytest.mark.parametrize("limit", [0, -1, "lots", 2.5])
def test_the_cap_per_batch_is_a_positive_whole_number(limit):
    message = refused(bootstrap_servers="a:9092", topic="readings", max_offsets_per_trigger=limit)
    assert f"meta.stream.max_offsets_per_trigger is {limit!r}; give a positive whole number of records" in message


def test_a_batch_read_takes_the_whole_topic_without_the_cap():
    streaming = kafka_options(NAME, {
        "bootstrap_servers": "a:9092", "topic": "readings", "starting_offsets": "latest",
        "max_offsets_per_trigger": 10,
    })
    assert batch_read_options(streaming) == {
        "kafka.bootstrap.servers": "a:9092", "subscribe": "readings",
        "startingOffsets": "earliest", "endingOffsets": "latest",
    }
