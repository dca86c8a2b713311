"""A Kafka topic as a dbt source: the YAML settings turned into Spark Kafka connector options.

    meta:
      stream:
        format: kafka
        bootstrap_servers: "{{ env_var('KAFKA_BOOTSTRAP_SERVERS') }}"
        topic: recordings              # or topic_pattern: "recordings-.*"
        starting_offsets: earliest     # where a new checkpoint starts: earliest (default) | latest
        max_offsets_per_trigger: 10000 # optional cap per micro-batch
        options: {kafka.security.protocol: SASL_SSL}   # any other connector option

The source's columns are the connector's: key, value (binary), topic, partition, offset,
timestamp, timestampType; models parse `value` in SQL, e.g.
`from_json(cast(value as string), 'id int, kind string')`.
"""

from __future__ import annotations

from typing import Any, Mapping
from dbt_spark_streaming.errors import ConfigError


class KafkaSourceConfigError(ConfigError):
    pass


def kafka_options(name: str, meta: Mapping[str, Any]) -> dict[str, str]:
    servers = meta.get("bootstrap_servers")
    if not servers:
        raise KafkaSourceConfigError(
            f"Source {name}: meta.stream.bootstrap_servers is missing; give the brokers as "
            "host:port[,host:port], e.g. \"{{ env_var('KAFKA_BOOTSTRAP_SERVERS') }}\"."
        )
    topics = {key: meta.get(key) for key in ("topic", "topic_pattern") if meta.get(key)}
    if len(topics) != 1:
        raise KafkaSourceConfigError(
            f"Source {name}: give exactly one of meta.stream.topic (a name, or names separated "
            "by commas) and meta.stream.topic_pattern (a regular expression)."
        )
    starting = str(meta.get("starting_offsets", "earliest"))
    options = {
        "kafka.bootstrap.servers": str(servers),
        "subscribe" if "topic" in topics else "subscribePattern": str(next(iter(topics.values()))),
        "startingOffsets": starting,
    }
    limit = meta.get("max_offsets_per_trigger")
    if limit is not None:
        if not str(limit).isdigit() or int(limit) < 1:
            raise KafkaSourceConfigError(
                f"Source {name}: meta.stream.max_offsets_per_trigger is {limit!r}; give a "
                "positive whole number of records per micro-batch."
            )
        options["maxOffsetsPerTrigger"] = str(limit)
    return options


def batch_read_options(options: Mapping[str, str]) -> dict[str, str]:
    """The same topic read once as a batch (a model that is not streaming): all of it, no cap."""
    batch = {k: v for k, v in options.items() if k not in ("maxOffsetsPerTrigger", "startingOffsets")}
    batch.update(startingOffsets="earliest", endingOffsets="latest")
    return batch
