"""Whether a changed query can go on from its model's checkpoint: found on the run that makes the
change, not on the first later run that has data.

Spark checks a query against the checkpoint it continues from only when it plans a batch. With
nothing new there is no batch, so a change the checkpoint cannot take (a column added to an
aggregate, a grouping key changed, an input added or swapped) passed that run green and failed
the next run with data, hours later, or the first landing while served. A run whose query
changed since the last therefore checks, before its query starts:

1. the inputs: the checkpoint's last offsets are of as many inputs as the query reads, and each
   is the same input (a file source's logged files lie in the folder the query reads, a Delta
   source's offsets are of the table's id, a Kafka source's of the topics it subscribes to);
2. the state: the query is started on a copy of the checkpoint in which an empty batch is
   planned after the last, with a sink that writes nothing. Spark plans it as the first batch
   after a restart, which checks each stateful operator, and its state's key and value
   schemas, against the checkpoint's. A batch the checkpoint had planned but not committed is
   run again there instead, on the copy. The copy is deleted after; the checkpoint and the
   table are untouched.

A change that fails either check stops the run, with what changed and the ways forward.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any, Optional

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from dbt_spark_streaming.jvm import hadoop_fs, plans
from dbt_spark_streaming.delta import log as delta_log
from dbt_spark_streaming.jvm.plans import StreamingInput
from dbt_spark_streaming.errors import StreamingModelError, error_text
from dbt_spark_streaming.jvm import checkpoint_log
from dbt_spark_streaming.jvm.checkpoint_log import COMMITS, OFFSETS
from dbt_spark_streaming.lifecycle.checkpoint_names import prepare
from dbt_spark_streaming.lifecycle.query_changes import summary
from dbt_spark_streaming.progress.recorder import TRIAL_QUERY_PREFIX

TRIAL_SUFFIX = ".query_trial"  # the copy's folder, beside the checkpoint's
_GLOB = set("*?[{")


def refuse_if_unfit(
    spark: SparkSession, model: str, checkpoint: str, frame: DataFrame, output_mode: str, changed: str
) -> None:
    """Raise StreamingModelError when the changed query (`frame`, as its write starts it) cannot
    go on from `checkpoint`; `changed`: what changed, as query_changes.check said it."""
    reason = _inputs_changed(spark, checkpoint, frame) or _state_refused(spark, model, checkpoint, frame, output_mode)
    if reason:
        raise StreamingModelError(
            f"Model {model}: its query changed since the last run ({summary(changed)}), and its "
            f"checkpoint {checkpoint} cannot take the change: {reason}\n"
            f"Nothing was written and the checkpoint did not move. Rebuild the model with the new "
            f"query from all its input: `dbt run --full-refresh --select {model}+` (the `+` "
            f"rebuilds the models that stream from it too). For a streaming_table, "
            f"on_query_change='redeploy' builds it beside the table instead, and readers keep the "
            f"old rows until the new table has caught up. Or undo the change."
        )


def _inputs_changed(spark: SparkSession, checkpoint: str, frame: DataFrame) -> Optional[str]:
    last = checkpoint_log.last_batch(spark, checkpoint, OFFSETS)
    if last is None:
        return None
    planned = checkpoint_log.entry(spark, checkpoint, OFFSETS, last)
    offsets, named = checkpoint_log.source_offsets(planned), checkpoint_log.names_sources(planned)
    inputs = plans.streaming_inputs(frame)
    if not named and len(offsets) != len(inputs):
        return (f"the checkpoint holds positions in {_count(len(offsets))} and the query now reads "
                f"{_count(len(inputs))} ({', '.join(map(_described, inputs))}), and it was written "
                f"before streaming sources had names (Spark 4.1 or older), so it cannot tell which "
                f"input is which. Run the model once with its previous inputs first: that run "
                f"gives the checkpoint its inputs' names, after which inputs can be added and "
                f"removed (docs/changing-models.md, \"Adding or removing an input\").")
    topics = plans.subscribed_topics(frame)
    for position, (found, subscribed) in enumerate(zip(inputs, topics)):
        key = checkpoint_log.input_key(position, found.name, named)
        if key not in offsets:
            continue  # an input added: read from its start (its starting options)
        was = _read_before(spark, checkpoint, key, checkpoint_log.offset(offsets[key]))
        if was is not None and not _same_input(spark, was, found, subscribed):
            which = f"{found.name!r}" if named else str(position + 1)
            return (f"its input {which} is now {_described(found, subscribed)}, but the "
                    f"checkpoint's positions for it are in {_said(was)}. Positions in one input "
                    f"cannot be applied to another.")
    return None


def _read_before(spark: SparkSession, checkpoint: str, key: str, offset: Any) -> Optional[tuple[str, Any]]:
    """What the checkpoint's input with `key` was, as (kind, identity): ("files", a file it took),
    ("delta", the table's id) or ("kafka", its topics); None when the offset does not say."""
    if not isinstance(offset, dict):
        return None
    if "logOffset" in offset:
        taken = checkpoint_log.newest_file_seen(spark, checkpoint, key)
        return ("files", taken) if taken else None
    if "reservoirId" in offset:
        return "delta", str(offset["reservoirId"])
    if offset and all(isinstance(partitions, dict) for partitions in offset.values()):
        return "kafka", frozenset(offset)
    return None


def _same_input(spark: SparkSession, was: tuple[str, Any], found: StreamingInput,
                subscribed: Optional[frozenset[str]]) -> bool:
    kind, identity = was
    if kind == "kafka":
        return found.format == "kafka" and (subscribed is None or subscribed == identity)
    if kind == "delta":
        return found.format == "delta" and found.path is not None and (
            delta_log.table_id(spark, found.path) == identity)
    if found.format in ("delta", "kafka") or found.path is None:
        return False
    if _GLOB & set(found.path):
        return True  # a pattern: the folder it matches is not one path to compare
    scheme, host, folder = hadoop_fs.file_key(found.path)
    taken_scheme, taken_host, taken = hadoop_fs.file_key(identity)
    return (scheme, host) == (taken_scheme, taken_host) and taken.startswith(folder + "/")


def _said(was: tuple[str, Any]) -> str:
    kind, identity = was
    if kind == "files":
        return f"the files of {posixpath.dirname(hadoop_fs.file_key(identity)[2])}"
    if kind == "delta":
        return f"the Delta table with id {identity}"
    return f"Kafka topic(s) {', '.join(sorted(identity))}"


def _described(found: StreamingInput, subscribed: Optional[frozenset[str]] = None) -> str:
    if subscribed:
        return f"Kafka topic(s) {', '.join(sorted(subscribed))}"
    return f"{found.format} {found.path}" if found.path else found.format


def _count(inputs: int) -> str:
    return f"{inputs} input{'s' if inputs != 1 else ''}"


def _state_refused(
    spark: SparkSession, model: str, checkpoint: str, frame: DataFrame, output_mode: str
) -> Optional[str]:
    """Spark's refusal of the query on a copy of the checkpoint; None when it runs (or when the
    checkpoint's own query runs in this process: the copy has its id, and Spark would stop the
    running one to start the trial; the model's start refuses to run twice anyway)."""
    if _query_id(spark, checkpoint) in {str(active.id) for active in spark.streams.active}:
        return None
    trial = checkpoint.rstrip("/") + TRIAL_SUFFIX
    hadoop_fs.delete(spark, trial)  # one left by a run killed while trying
    hadoop_fs.copy_tree(spark, checkpoint, trial)
    try:
        inputs = plans.streaming_inputs(frame)
        # As the model's own will be when it starts (its inputs were checked above).
        prepare(spark, model, trial, lambda: inputs)
        _plan_empty_batch(spark, trial, len(inputs))
        query = (frame.writeStream.queryName(f"{TRIAL_QUERY_PREFIX}{model}").format("noop")
                 .outputMode(output_mode).option("checkpointLocation", trial).trigger(once=True).start())
        try:
            query.awaitTermination()
        except (PySparkException, Py4JJavaError) as error:
            return "Spark refused it: " + _spark_said(error)
        return None
    finally:
        hadoop_fs.delete(spark, trial)


def _query_id(spark: SparkSession, checkpoint: str) -> Optional[str]:
    """The id Spark keeps in the checkpoint's `metadata` file."""
    try:
        return str(json.loads(hadoop_fs.read_text(spark, f"{checkpoint.rstrip('/')}/metadata"))["id"])
    except (OSError, ValueError, KeyError, TypeError, Py4JJavaError):
        return None


def _plan_empty_batch(spark: SparkSession, checkpoint: str, inputs: int) -> None:
    """After a committed last batch, the next one planned with the same offsets: a batch that
    reads nothing, which Spark plans, and checks, when the query starts. Not when the query
    reads more or fewer inputs than the checkpoint has offsets for (one added or removed): Spark
    then plans the next batch itself, over what is new, into the sink that writes nothing."""
    last = checkpoint_log.last_batch(spark, checkpoint, OFFSETS)
    if last is None or last != checkpoint_log.last_batch(spark, checkpoint, COMMITS):
        return
    entries = checkpoint_log.folder(checkpoint, OFFSETS)
    planned = hadoop_fs.read_text(spark, f"{entries}/{last}")
    if len(checkpoint_log.source_offsets(planned.split("\n"))) != inputs:
        return
    hadoop_fs.write_text(spark, f"{entries}/{last + 1}", planned)


def _spark_said(error: BaseException) -> str:
    """Spark's reason without the query's identifiers and plan, nor its advice to skip the check."""
    text = error_text(error)
    text = re.sub(r"^\[STREAM_FAILED\] Query \[[^\]]*\] terminated with exception: ", "", text.strip())
    said = []
    for line in text.splitlines():
        if line.startswith(("=== Streaming Query ===", "If you want to force")) or len(said) == 4:
            break
        if line.strip():
            said.append(line.strip())
    return " ".join(said)[:800]
