"""py4j's callback connections that no JVM thread will use again, closed.

Each JVM thread that calls into Python (a streaming query's foreachBatch, the progress listener)
gets a connection to Python of its own, pinned to it, with a Python thread reading it. py4j
closes none when its JVM thread ends. Every run of a served model starts a query, whose stream
thread is new, so the service kept one more socket in each process and one more Python thread
per run: about 3,600 an hour (docs/BENCHMARKS.md section 7). Besides the file descriptors
running out, every process the JVM starts (Hadoop's local file system runs `readlink` on each
rename, tens of times a batch) first closes all of the JVM's descriptors: 2 ms a start at 450
of them, 21 ms at 4,000. So each batch got slower the longer the service ran.

close_stale() closes the least recently used idle connections beyond a few. The ones a thread
still uses are given back after each call, so they stay at the recent end; a live thread whose
connection was closed opens a new one on its next call (py4j checks before using it). It works
only in py4j's pinned-thread mode, PySpark's default, where its lock is taken and released from
one JVM thread; otherwise it does nothing.
"""

from __future__ import annotations

from typing import Any

from py4j.protocol import Py4JError
from pyspark.sql import SparkSession

KEPT = 4  # idle connections left open: the listener's and a few a later call may reuse

_PINNED_CLIENT = "py4j.PythonClient"


def close_stale(spark: SparkSession, kept: int = KEPT) -> int:
    """Close the oldest idle callback connections of the session's py4j gateway beyond `kept`;
    how many were closed. A py4j that is not as read here leaves them open rather than fail the
    run that asked (0)."""
    try:
        handles = _handles(spark.sparkContext._gateway)
    except Py4JError:
        return 0
    if handles is None:
        return 0
    connections, lock = handles
    if connections.size() <= kept:  # unlocked: a stale size only moves the sweep to the next call
        return 0
    closed = 0
    lock.lock()
    try:
        # Shut down under py4j's lock: a thread that takes its connection out of the deque after
        # this finds it closed and opens another; one that took it before is not in the deque.
        while connections.size() > kept:
            connections.pollFirst().shutdown()
            closed += 1
    finally:
        lock.unlock()
    return closed


def idle_count(spark: SparkSession) -> int:
    """The idle callback connections the gateway keeps open (0 outside pinned-thread mode)."""
    handles = _handles(spark.sparkContext._gateway)
    return 0 if handles is None else int(handles[0].size())


_fields: dict[int, Any] = {}


def _handles(gateway: Any) -> Any:
    """(the callback client's deque of idle connections, its lock), or None when the gateway is
    not a pinned-thread one. The client is asked for each time: PySpark replaces it when its
    first foreachBatch starts the callback server. Both fields are protected: read through
    reflection, the Field objects kept per gateway."""
    client = gateway.java_gateway_server.getCallbackClient()
    if client.getClass().getName() != _PINNED_CLIENT:
        return None
    key = id(gateway)
    if key not in _fields:
        owner = gateway.jvm.java.lang.Class.forName("py4j.CallbackClient")
        found = []
        for name in ("connections", "lock"):
            field = owner.getDeclaredField(name)
            field.setAccessible(True)
            found.append(field)
        _fields[key] = tuple(found)
    connections, lock = _fields[key]
    return connections.get(client), lock.get(client)
