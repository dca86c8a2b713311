"""A DataFrame's query plan, as Spark's JVM holds it: what the runtime asks of one.

A plan here is the JVM's own object (a py4j handle): callers outside jvm/ pass it back to
these functions and never call methods on it themselves.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

from py4j.protocol import Py4JError
from pyspark.sql import DataFrame, SparkSession

_OUTPUT_MODES = {"append": "Append", "complete": "Complete", "update": "Update"}


def analyzed(frame: DataFrame):
    """The frame's analyzed logical plan."""
    return frame._jdf.queryExecution().analyzed()


def optimized(spark: SparkSession, frame: DataFrame):
    """The frame's plan after Spark's optimizer (column pruning: what is read of each scan)."""
    return spark._jsparkSession.sessionState().optimizer().execute(analyzed(frame))


def analyzed_node_name(frame: DataFrame) -> str:
    """The name of the top node of the frame's analyzed plan (`Aggregate`, `Project`, ...)."""
    return analyzed(frame).nodeName()


def check_streaming(frame: DataFrame, plan, output_mode: str) -> None:
    """Spark's own check of a streaming plan in `output_mode` (UnsupportedOperationChecker);
    raises Spark's error (PySparkException or Py4JJavaError) for an operation it refuses."""
    jvm = frame.sparkSession._jvm
    mode = _OUTPUT_MODES[output_mode]
    jvm.org.apache.spark.sql.catalyst.analysis.UnsupportedOperationChecker.checkForStreaming(
        plan, getattr(jvm.org.apache.spark.sql.streaming.OutputMode, mode)()
    )


def node_name(plan) -> str:
    return plan.nodeName()


def is_streaming(plan) -> bool:
    return plan.isStreaming()


def children(plan) -> list:
    found = plan.children()
    return [found.apply(i) for i in range(found.size())]


def contains(plan, name: str) -> bool:
    """The plan or a node below it is a `name` node."""
    return plan.nodeName() == name or any(contains(child, name) for child in children(plan))


def columns_read_from_files(plan, path: str) -> set[str] | None:
    """The columns (lower case) of the file scans of `path` that the plan refers to; None when
    it has no scan of that path."""
    leaves = [leaf for leaf in _nodes(plan) if leaf.nodeName() == "StreamingRelation" and _path_of(leaf) == path]
    if not leaves:
        return None
    referenced = set()
    for node in _nodes(plan):
        referenced |= {attribute.exprId().id() for attribute in _seq(node.references().toSeq())}
    referenced |= {attribute.exprId().id() for attribute in _seq(plan.output())}
    return {
        attribute.name().lower()
        for leaf in leaves
        for attribute in _seq(leaf.output())
        if attribute.exprId().id() in referenced
    }


class StreamingInput(NamedTuple):
    """One source of a streaming plan: its format (`delta`, `json`, `kafka`, ...), the path it
    reads, where it has one, and the name it was given (config/stream_reads.py names each), by
    which a checkpoint of Spark's offset log version 2 keeps its offsets and its `sources/` folder."""

    format: str
    path: str | None
    name: str | None = None


def streaming_inputs(frame: DataFrame) -> list[StreamingInput]:
    """The frame's streaming sources in the order Spark numbers them in a checkpoint (the lines of
    its offset log, the folders under `sources/`): the plan's leaves top down, a relation read
    twice counted once. A source Spark reads through its newer API (Kafka) has no path."""
    return [_input_of(leaf) for leaf in _streaming_leaves(frame)]


def subscribed_topics(frame: DataFrame) -> list[frozenset[str] | None]:
    """Beside each of streaming_inputs: the topics a Kafka source subscribes to by name; None for
    any other source, or one that subscribes by pattern or assignment."""
    topics: list[frozenset[str] | None] = []
    for leaf in _streaming_leaves(frame):
        named = None
        if leaf.nodeName() == "StreamingRelationV2" and str(leaf.sourceName()).lower() == "kafka":
            named = leaf.extraOptions().get("subscribe")
        topics.append(frozenset(t.strip() for t in str(named).split(",") if t.strip()) if named else None)
    return topics


def _streaming_leaves(frame: DataFrame) -> list:
    leaves: list = []
    for node in _nodes(analyzed(frame)):
        name = node.nodeName()
        if name.startswith("StreamingRelation") and not any(node.equals(seen) for seen in leaves):
            leaves.append(node)
    return leaves


def _input_of(leaf) -> StreamingInput:
    name = _name_of(leaf)
    if leaf.nodeName() != "StreamingRelation":  # StreamingRelationV2: Kafka, rate, memory
        return StreamingInput(str(leaf.sourceName()).lower(), None, name)
    return StreamingInput(str(leaf.dataSource().className()).lower(), _path_of(leaf), name)


def _name_of(leaf) -> str | None:
    """The source's name (DataStreamReader.name, SQL's IDENTIFIED BY); None when it has none."""
    try:
        named = leaf.sourceIdentifyingName().nameOpt()
    except Py4JError:  # a leaf without names
        return None
    return str(named.get()) if named.isDefined() else None


def release_local_checkpoint(checkpointed: DataFrame) -> None:
    """Free a locally checkpointed frame's rows now rather than when the JVM's garbage collector
    gets to them (Spark's cleaner then drops them); its plan is the RDD's LogicalRDD."""
    try:
        checkpointed._jdf.queryExecution().logical().rdd().unpersist(False)
    except (Py4JError, AttributeError):  # not a LogicalRDD in this Spark: left to the cleaner
        pass


def _path_of(leaf) -> str | None:
    path = leaf.dataSource().options().get("path")
    return str(path.get()).rstrip("/") if path.isDefined() else None


def _nodes(plan) -> Iterable:
    yield plan
    for child in _seq(plan.children()):
        yield from _nodes(child)


def _seq(scala_seq) -> list:
    return [scala_seq.apply(index) for index in range(scala_seq.size())]
