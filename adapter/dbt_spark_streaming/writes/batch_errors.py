"""Errors raised inside a micro-batch, kept for the run to report as they were raised.

Spark calls a foreachBatch function through py4j's callback server. When the function raises,
the query fails with [FOREACH_BATCH_USER_FUNCTION_ERROR], whose message carries Python's
traceback as text after "Reason:" (or nothing, for an error that py4j hands the JVM as a Java
exception), so what dbt would print is the wrapper, not the cause. Every foreachBatch function
of a model's write is wrapped here: the exception it raises is kept by the query's checkpoint,
and the run that awaits the query takes it back and reports it (writes/streaming.py).
"""

from __future__ import annotations

import threading
from typing import Callable, Optional

from pyspark.sql import DataFrame

from dbt_spark_streaming.errors import StreamingError, explain, explain_batch_error

ForeachBatch = Callable[[DataFrame, int], None]

_raised: dict[str, BaseException] = {}
_lock = threading.Lock()


def kept_for(checkpoint: str, function: ForeachBatch) -> ForeachBatch:
    """`function`, whose exception is kept for `checkpoint`'s query before Spark wraps it."""

    def call(batch: DataFrame, batch_id: int) -> None:
        try:
            function(batch, batch_id)
        except BaseException as error:
            with _lock:
                _raised[checkpoint] = error
            raise

    return call


def take(checkpoint: str) -> Optional[BaseException]:
    """The error the last failed batch of `checkpoint`'s query raised, once; None if none did."""
    with _lock:
        return _raised.pop(checkpoint, None)


def forget(checkpoint: str) -> None:
    """Before a query starts: an error kept from an earlier start is not this one's."""
    take(checkpoint)


def failure(model: str, checkpoint: str, error: BaseException) -> StreamingError:
    """Why the query of `checkpoint` failed, for the person running `model`: the error its
    micro-batch raised if one did (Spark only wraps it), else Spark's own, explained."""
    raised = take(checkpoint)
    return explain_batch_error(model, raised) if raised is not None else explain(model, error)
