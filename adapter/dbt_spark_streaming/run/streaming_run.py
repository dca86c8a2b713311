"""One run of streaming models and everything it keeps while it runs, owned by one object.

A `StreamingRun` is one dbt invocation's streaming state:

- `display`: the live view of batches on the terminal (progress/live.py)
- `recorder`: the progress listener that hears every batch of the session's queries and keeps
  them for the progress table (progress/recorder.py)
- `summaries`: what each streaming model did, printed at the end (on-run-end)
- the writes left serving (processing-time triggers), with how to start each again, so that
  serving can start a failed one again from its checkpoint; and the on_new_data models, which
  serving runs again each time an input commits (serve/dataflow.py)
- whether Ctrl-C interrupted it: a model that would start a query after that refuses to

Who starts it: the adapter's connection manager, once per dbt invocation (its __init__, where
that invocation's source views start too), with `StreamingRun.start()`, and the adapter passes it
to each model's run (run/model_run.py), to Ctrl-C's stop and to serving. `StreamingRun.current()`
is for what runs beside dbt rather than under it (the service command, tests).

Who installs the live display: the run, once, as it starts. It makes its display and points its
recorder at it before any stream starts, so every batch the recorder hears is shown there,
whichever model, or the serving loop, first needs the recorder. The recorder becomes a listener
of the Spark session the first time the run needs it there (`listen(spark)`), once per session.

Between runs in one process (the tests run dbt many times on one session) a run takes over the
previous run's recorder: it stays the session's one listener (a second would record each batch
twice), and the batches it heard but did not write to the progress table yet (a run that ended
before its on-run-end) go with the next flush. Summaries and served writes start empty.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Callable, Optional

from dbt_spark_streaming.progress.live import LiveProgress, print_summary
from dbt_spark_streaming.progress.recorder import ProgressRecorder
from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.session import session_key

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from dbt_spark_streaming.run.summary import StreamSummary


class NoStreamingRunError(RuntimeError):
    pass


@dataclass(frozen=True)
class Served:
    """A query left running after its model: what started it (model, checkpoint, query_name),
    and how to start it again from its checkpoint."""

    write: Any
    start: Optional[Callable[["SparkSession"], "StreamingQuery"]] = None


class StreamingRun:
    def __init__(self, display: Optional[LiveProgress] = None,
                 recorder: Optional[ProgressRecorder] = None):
        self.display = display or LiveProgress()
        self.recorder = recorder or ProgressRecorder()
        self.recorder.show_on(self.display.batch)
        self.summaries: list[StreamSummary] = []
        self._served: dict[str, Served] = {}
        self._scheduled: dict[str, Any] = {}  # query name -> dataflow.ScheduledModel
        self.unserved_said = False  # serving.say_unserved, once per run
        self.served = False  # serving.serve_until_stopped has served the run's queries
        self._lock = threading.Lock()
        self._interrupted = threading.Event()
        self._listening_to: Optional[int] = None  # the session the recorder listens to

    @classmethod
    def start(cls, display: Optional[LiveProgress] = None) -> "StreamingRun":
        """A new run, now the process's current one (see the module's docstring)."""
        global _current
        with _current_lock:
            previous = _current
            run = cls(display, previous.recorder if previous is not None else None)
            if previous is not None:
                run._listening_to = previous._listening_to
            _current = run
        return run

    @classmethod
    def current(cls) -> "StreamingRun":
        """The run in progress; one must have been started."""
        run = _current
        if run is None:
            raise NoStreamingRunError(
                "No streaming run was started in this process: StreamingRun.start() first (the "
                "adapter's connection manager starts one per dbt invocation)."
            )
        return run

    @classmethod
    def current_or_none(cls) -> Optional["StreamingRun"]:
        return _current

    def listen(self, spark: "SparkSession") -> ProgressRecorder:
        """The run's recorder, a listener of the session's queries from the first call on."""
        key = session_key(spark)
        with self._lock:
            if self._listening_to != key:
                spark.streams.addListener(self.recorder)
                self._listening_to = key
        return self.recorder

    def keep_serving(self, write: Any, start: Optional[Callable[["SparkSession"], "StreamingQuery"]] = None) -> None:
        """A write whose query runs on after its model (a processing-time trigger); `start`
        starts it again from its checkpoint."""
        with self._lock:
            self._served[write.query_name] = Served(write, start)

    def keep_scheduled(self, model: Any) -> None:
        """An on_new_data model (serve/dataflow.py's ScheduledModel): run again by the serving
        loop each time one of its inputs commits."""
        with self._lock:
            self._scheduled[model.name] = model

    def scheduled(self) -> list[Any]:
        """The on_new_data models, in the order the run kept them (dbt's: upstream first)."""
        with self._lock:
            return list(self._scheduled.values())

    def served_names(self) -> list[str]:
        """The queries this run keeps for serving (processing-time models)."""
        with self._lock:
            return sorted(self._served)

    def served_write(self, query_name: str) -> Any:
        """What started a served query (its model, checkpoint and query name), or None."""
        with self._lock:
            served = self._served.get(query_name) or self._scheduled.get(query_name)
        return served.write if served is not None else None

    def start_again(self, query_name: str, spark: "SparkSession") -> "StreamingQuery":
        with self._lock:
            served = self._served.get(query_name)
        if served is None or served.start is None:
            raise StreamingModelError(f"Query {query_name} was not started by this run's models.")
        return served.start(spark)

    def interrupt(self) -> None:
        """Ctrl-C: no model of this run starts a query from now on."""
        self._interrupted.set()

    @property
    def interrupted(self) -> bool:
        return self._interrupted.is_set()

    def refuse_if_interrupted(self, model: str) -> None:
        if self.interrupted:
            raise StreamingModelError(f"Model {model}: stopped, the run was interrupted.")

    def finish(self, spark: "SparkSession", out: Optional[IO[str]] = None) -> None:
        """on-run-end: a summary per streaming model, and the run's batches into the progress
        table (a failure to append is said, not raised: the models' data is in)."""
        print_summary(self.summaries, out)
        self.summaries.clear()
        try:
            self.recorder.flush(spark)
        except Exception as error:
            print(f"Could not append this run's batches to the progress table: {error}",
                  file=out or sys.stdout)


_current: Optional[StreamingRun] = None
_current_lock = threading.Lock()
