"""What a model's query reads, remembered in its checkpoint's folder, so that a run can tell the
model has nothing new without resolving its SQL first.

Resolving a model's SQL (each input looked up in the catalog, each column checked, the plan
checked for what a stream cannot run) is most of what a model with nothing new costs. The
streaming inputs it resolves to, in the order the checkpoint numbers them, follow from the SQL,
from the settings of the sources it names and from where the catalog keeps the tables it
streams from: the first two make the remembered inputs' key, the last is looked up (one
metastore call per table, no Delta log read) and must be where the inputs were. Anything else
(no remembered inputs, another key, a view, a reset waiting in the checkpoint, a landing folder
gone, queries of unreadable lines beside the model's, a processing-time trigger, whose served
query starts from the resolved view) and the model resolves its SQL as always.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import is_dataclass, replace
from typing import Any, Optional, Sequence

from pyspark.sql import SparkSession

from dbt_spark_streaming.config.stream_reads import TABLE, stream_reads
from dbt_spark_streaming.config.triggers import AVAILABLE_NOW
from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.jvm.plans import StreamingInput
from dbt_spark_streaming.lifecycle.reset.reset_record import RECORD
from dbt_spark_streaming.lifecycle.up_to_date import UpToDate, nothing_new

FILE = "query_inputs.json"


def key_of(sql: str, source_views: Any, config: Any = None) -> str:
    """The SQL, the settings of the meta.stream sources it names (`source_views`: the run's
    SourceViews) and the model's config (a contract or expectations given since are checked
    against the resolved query)."""
    declared = source_views.streaming_sources()
    named = [repr(declared[view]) for view in source_views.named_in(sql) if view in declared]
    if is_dataclass(config) and hasattr(config, "trigger"):  # when it runs, not what it reads
        config = replace(config, trigger=AVAILABLE_NOW, model_trigger=AVAILABLE_NOW)
    return hashlib.sha256("\n".join([sql, *named, repr(config)]).encode()).hexdigest()


def remember(spark: SparkSession, checkpoint: str, key: str, inputs: Sequence[StreamingInput],
             companions: int) -> None:
    """The inputs the query with `key` resolved to (written only when they changed);
    `companions`: how many queries of unreadable lines run beside it."""
    said = json.dumps({"key": key, "inputs": [list(found) for found in inputs], "companions": companions})
    location = _file(checkpoint)
    if hadoop_fs.exists(spark, location) and hadoop_fs.read_text(spark, location) == said:
        return
    hadoop_fs.mkdirs(spark, checkpoint)
    hadoop_fs.write_text(spark, location, said)


def recall(spark: SparkSession, checkpoint: str, key: str) -> Optional[list[StreamingInput]]:
    """The inputs remembered for `key`; None when none are, or a query of unreadable lines runs
    beside the model's (each has its own checkpoint to hold against its inputs)."""
    location = _file(checkpoint)
    if not hadoop_fs.exists(spark, location):
        return None
    try:
        said = json.loads(hadoop_fs.read_text(spark, location))
    except ValueError:
        return None
    if said.get("key") != key or said.get("companions"):
        return None
    return [StreamingInput(*found[:3]) for found in said.get("inputs", [])]


def up_to_date_before_resolving(spark: SparkSession, checkpoint: str, key: str, sql: str) -> Optional[UpToDate]:
    """UpToDate when the remembered inputs are still the query's and none has anything new."""
    if hadoop_fs.exists(spark, f"{checkpoint.rstrip('/')}/{RECORD}"):
        return None  # a checkpoint reset waits: the query reads from elsewhere this time
    inputs = recall(spark, checkpoint, key)
    if not inputs:
        return None
    delta_paths = {hadoop_fs.file_key(found.path) for found in inputs if found.format == "delta" and found.path}
    for read in stream_reads(sql):
        if read.kind != TABLE:
            continue
        location = delta_tables.catalog_location(spark, read.relation)
        if location is None or hadoop_fs.file_key(location) not in delta_paths:
            return None  # a view, or the table is elsewhere now
    for found in inputs:
        if found.format != "delta" and (found.path is None or not hadoop_fs.exists(spark, found.path)):
            return None  # its folder is gone: resolving says so
    return nothing_new(spark, checkpoint, inputs=inputs)


def _file(checkpoint: str) -> str:
    return f"{checkpoint.rstrip('/')}/{FILE}"
