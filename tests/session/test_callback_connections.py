"""py4j's callback connections, one per JVM thread that called into Python, closed once nothing
uses them (adapter/dbt_spark_streaming/jvm/callback_connections.py): a served model's every run
starts a query on a new stream thread, and each left a socket and a Python thread behind."""

from __future__ import annotations

import threading
import time

from py4j.clientserver import ClientServerConnection

from dbt_spark_streaming.jvm import callback_connections

QUERIES = 6


def _run_query(spark, source: str, checkpoint: str) -> list[int]:
    """One availableNow query over `source` whose foreachBatch runs in this Python process,
    called from the query's own stream thread; the row counts its batches saw."""
    seen: list[int] = []
    query = (spark.readStream.name("input").format("delta").load(source).writeStream
             .foreachBatch(lambda frame, _batch_id: seen.append(frame.count()))
             .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
    query.awaitTermination()
    return seen


def _callback_threads() -> set[threading.Thread]:
    """Python threads reading a callback connection, picked by what they run, not all threads.
    Compared as sets, not counts: threads of earlier tests in this process end at any time."""
    return {thread for thread in threading.enumerate()
            if isinstance(getattr(getattr(thread, "_target", None), "__self__", None),
                          ClientServerConnection)}


def _until(condition, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_each_query_thread_leaves_a_connection_that_close_stale_closes(spark, tmp_path):
    source = str(tmp_path / "source")
    spark.range(3).write.format("delta").save(source)
    assert _run_query(spark, source, str(tmp_path / "checkpoint_first")) == [3]  # PySpark's callback server up
    callback_connections.close_stale(spark)
    idle_before, threads_before = callback_connections.idle_count(spark), _callback_threads()

    for number in range(QUERIES):
        assert _run_query(spark, source, str(tmp_path / f"checkpoint_{number}")) == [3]
    leaked = callback_connections.idle_count(spark) - idle_before
    assert leaked >= QUERIES, "each query's stream thread keeps its connection and a Python thread"
    started = _callback_threads() - threads_before
    assert len(started) >= QUERIES

    closed = callback_connections.close_stale(spark)

    assert closed >= QUERIES - callback_connections.KEPT
    assert callback_connections.idle_count(spark) <= callback_connections.KEPT
    # Each closed connection's Python thread sees the socket end and returns.
    assert _until(lambda: len(_callback_threads() & started) <= callback_connections.KEPT)
    # Callbacks still work: a new stream thread opens a connection of its own.
    assert _run_query(spark, source, str(tmp_path / "checkpoint_after")) == [3]
