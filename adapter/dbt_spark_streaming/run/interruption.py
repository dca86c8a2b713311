"""Ctrl-C during a run: the running streams stop, and the person is told which ones and that
nothing is lost (the next run resumes each from its checkpoint).

Nothing else would stop them: pyspark starts Spark's JVM with SIGINT ignored, and dbt runs models
in worker threads, so its KeyboardInterrupt (main thread) only cancels the adapter's connections
and then waits for the worker threads, which wait for their stream to catch up. The adapter's
cancel_open calls stop_streams with its run; the run is then interrupted, and a model whose
stream was stopped, or that would start one after, fails instead of reporting "caught up" or
starting a served query (run/model_run.py).
"""

from __future__ import annotations

import sys
from typing import Sequence

from dbt_spark_streaming.run.streaming_run import StreamingRun
from dbt_spark_streaming.session import active_session


def stop_streams(run: StreamingRun, cause: str) -> list[str]:
    """Stop every running query of this process now (a batch cut short is replanned from the
    checkpoint and written once by the next run); print one line saying so. Returns their names."""
    run.interrupt()
    spark = active_session()
    queries = list(spark.streams.active) if spark is not None else []
    if not queries:
        return []
    run.display.stop_live()  # so that the line below is not drawn over
    for query in queries:
        try:
            query.stop()
        except Exception:  # already failed or stopped: stopped either way
            pass
    names = [query.name for query in queries]
    print(stopped_message(cause, names), file=sys.stderr, flush=True)
    return names


def stopped_message(cause: str, names: Sequence[str], when: str = "") -> str:
    streams = f"the stream of {names[0]}" if len(names) == 1 else f"the streams of {', '.join(names)}"
    each = "it" if len(names) == 1 else "each"
    return (f"{cause}: stopped {streams}{when}; the next run resumes {each} from its checkpoint, "
            f"nothing is lost.")
