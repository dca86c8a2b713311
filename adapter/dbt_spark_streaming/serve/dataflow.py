"""Serving as a dataflow: a model runs when one of its inputs has committed, not on a clock.

Each model served with the `on_new_data` trigger is a `ScheduledModel`: its query's inputs, its
table's location, and how to start its query again from its checkpoint as an `available_now`
run. The scheduler, called by the serving loop (run/serving.py) every `POLL_SECONDS` and at once
when a run ends:

1. asks every input's watch (serve/input_watches.py: a `stat` or two, no Spark) whether it changed;
   each model reading a changed input becomes pending, since the time of the change (for a table
   another served model writes, since the time its own inputs changed: lag is end to end); and
   every `RECHECK_SECONDS` every model, for what a watch may have missed (on an object store,
   whose polls miss nothing and where each look is billed, every `REMOTE_RECHECK_SECONDS`);
2. starts the pending models that are not running, at most `runs_at_once()` at a time, earliest
   deadline first (the oldest change waited for, plus the model's target_lag, or the tightest
   target downstream of it: what a target needs runs first); a run first asks lifecycle/up_to_date.py whether the checkpoint has
   anything to do, and starts no query when it has not;
3. when a run ends, the models reading its table find it changed on the next pass, at once (on
   an object store they are told by the run, and the table is polled only slowly).

So one landing flows bronze -> silver -> gold without waiting for any trigger, and with nothing
landing no query runs and the loop costs a few `stat` calls. Each run is the model's ordinary
`available_now` query on its own checkpoint: the exactly-once guarantees are those of any run.
A stateful model whose watermark moved runs once more without data, which emits the windows
that closed (as a processing-time query's next trigger would).

A model's lag is how long ago the oldest input change it has not yet taken landed; its
`target_lag` (config) is how much it may have. Both are in the status file and in the progress
table's rows; a model over its target is said on the terminal, with what holds it.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from dbt_spark_streaming.jvm import hadoop_fs, session_settings
from dbt_spark_streaming.delta import log as delta_log
from dbt_spark_streaming.jvm.plans import StreamingInput
from dbt_spark_streaming.errors import StreamingModelError, root_cause
from dbt_spark_streaming.lifecycle import up_to_date
from dbt_spark_streaming.lifecycle.maintenance import Maintained, Upkeep, maintain, reader_positions
from dbt_spark_streaming.serve import backoff, input_watches
from dbt_spark_streaming.serve.environment import whole_number
from dbt_spark_streaming.serve.upkeep import UpkeepSchedule, compact_at, vacuum_every_seconds
from dbt_spark_streaming.session import claim_model, get_or_create_session, model_holder
from dbt_spark_streaming.writes.batch_errors import failure

POLL_SECONDS = 0.1
# Runs at once: on a laptop's few cores more only wait for CPU; a cluster's driver may take more.
RUNS_AT_ONCE_VARIABLE = "STREAM_SERVE_RUNS_AT_ONCE"


def runs_at_once() -> int:
    # On 2 cores, one run at a time: the three-hop latency benchmark's p50 was 9.0 s with two
    # (each batch waiting for CPU), 5.3 s with one.
    return whole_number(RUNS_AT_ONCE_VARIABLE, max(1, (os.cpu_count() or 1) // 2), 1,
                        "a whole number of queries that may run at once")
SAY_MISSED_EVERY_SECONDS = 30.0
NO_TARGET_SLACK_SECONDS = 60.0
# A folder's modification time moves in clock ticks: a file landing within the tick of the one
# before, just after a look, leaves it unchanged. Each model's checkpoint is checked this often
# anyway (lifecycle/up_to_date.py, no query unless something is new).
RECHECK_SECONDS = 60.0
# A model whose inputs are all on an object store: its polls miss nothing, and a check of its
# checkpoint there costs a few requests.
REMOTE_RECHECK_SECONDS = 600.0
# How often a served model's table on an object store is polled for its readers: they hear of the
# service's own commits at once; this finds a command's (attached to the service, or elsewhere).
WRITTEN_HERE_POLL_SECONDS = 60.0
# A model a command attached to the service writes (driver/) is tried again this often.
HELD_RETRY_SECONDS = 1.0
RUN_TIMINGS_KEPT = 250  # the status file carries them every 2 s

# An on_new_data model reading what no watch follows (Kafka) polls instead: this often, or
# twice within its target_lag.
POLLING_INTERVAL = "1 second"

# A served run takes what landed since the last one, usually a few rows: generating and compiling
# code for each batch's plan costs more than it saves there (the three-hop benchmark: p50 5.5 s
# with code generation, 4.5 s without; a JFR profile had a third of the tasks' time in codegen's
# comment stripping). Set while serving, for the queries the scheduler starts (a stream takes
# its session's settings when it starts); STREAM_SERVE_CODEGEN=1 keeps Spark's default.
SERVED_RUN_CONF = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
CODEGEN_VARIABLE = "STREAM_SERVE_CODEGEN"

# Spark splits a file scan into at least one read partition per core when it can
# (spark.sql.files.minPartitionNum, unset, is the default parallelism), and each read partition
# of a batch becomes a file of the table it appends to: a wave of a few landed files was two
# files a batch in bronze on 2 cores, and silver, reading those two, wrote two as well. Each is
# a tombstone in the log once compaction takes it (the 60-minute soak: 1,067 with two; section 7
# of docs/BENCHMARKS.md). With one, a served batch is read as partitions of
# spark.sql.files.maxPartitionBytes (128 MB): one for a wave, as many as before for a backlog
# over twice that, one task for what lies between. A value the profile sets is kept.
SERVED_READ_CONF = {"spark.sql.files.minPartitionNum": "1"}

Log = Callable[[str], None]


def polling_interval(target_lag: Optional[float]) -> str:
    if target_lag is None or target_lag >= 2:
        return POLLING_INTERVAL
    return f"{max(100, int(target_lag * 500))} milliseconds"


@dataclass
class ScheduledModel:
    """One served query: `write` names it (model, checkpoint, query_name), `start` starts its
    available_now run from the checkpoint, `inputs` are what its plan reads (in the checkpoint's
    order), `output` its table's location (None: nothing served reads it)."""

    write: Any
    start: Callable[[SparkSession], StreamingQuery]
    inputs: tuple[StreamingInput, ...]
    output: Optional[str]
    target_lag: Optional[float] = None
    pending_since: Optional[float] = None  # the oldest input change not yet taken
    running_since: Optional[float] = None  # pending_since of the run in progress
    running: Optional[Future] = None
    query: Optional[StreamingQuery] = None  # the run's, while it runs
    runs: int = 0
    skipped: int = 0  # passes that found nothing new in the checkpoint and started no query
    restarts: int = 0
    failures_in_a_row: int = 0
    last_failure: Optional[str] = None
    retry_at: Optional[float] = None
    last_lag: Optional[float] = None
    missed_said_at: float = 0.0
    missing: bool = False
    # the served models whose tables it reads (the scheduler's graph, set once)
    upstream: tuple["ScheduledModel", ...] = field(default=(), repr=False)
    upkeep: Optional[UpkeepSchedule] = None  # its table's maintenance (serve/upkeep.py)
    maintaining: Optional[Future] = None
    # Per run that started a query, seconds: the up-to-date check, start() until it returned, and
    # start() until the query ended (the last RUN_TIMINGS_KEPT runs; for the latency breakdown).
    run_timings: list = field(default_factory=list, repr=False)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    held_by: Optional[str] = None  # a command attached to the service that writes it now
    recheck_at: float = 0.0  # when it is next made pending whatever its watches say

    @property
    def name(self) -> str:
        return self.write.query_name

    @property
    def active(self) -> bool:
        """Served: waiting for new data or running (a failed run waits for its retry)."""
        return self.retry_at is None

    @property
    def set_aside(self) -> bool:
        """Failed too often in a row: the other models serve on without it (serve/backoff.py)."""
        return self.running is None and backoff.set_aside(self.failures_in_a_row)

    @property
    def waiting_on(self) -> tuple[str, ...]:
        """Its upstream models that are set aside: it waits on them, and says so."""
        return tuple(up.write.model for up in self.upstream if up.set_aside)

    @property
    def state(self) -> str:
        if self.running is not None:
            return "running"
        if self.maintaining is not None:
            return "maintaining its table"
        if self.held_by is not None:
            return f"waiting: {self.held_by} writes it"
        if self.retry_at is not None:
            retry_in = self.retry_at - time.monotonic()
            if self.set_aside:
                return backoff.set_aside_state(self.failures_in_a_row, retry_in)
            return f"retrying after a failure in {max(0.0, retry_in):.0f} s"
        if self.waiting_on:
            return f"waiting on {', '.join(self.waiting_on)}, which failed"
        return "pending" if self.pending_since is not None else "waiting for new data"

    def lag(self, now: Optional[float] = None) -> float:
        """Seconds behind its inputs now: since the oldest change it has not finished taking."""
        oldest = [t for t in (self.pending_since, self.running_since) if t is not None]
        return max(0.0, (now or time.time()) - min(oldest)) if oldest else 0.0

    def mark_pending(self, since: float) -> None:
        self.pending_since = since if self.pending_since is None else min(self.pending_since, since)


@dataclass(frozen=True)
class RunResult:
    ran: bool  # a query was started (else the checkpoint had nothing to do)
    batch_due: bool = False  # a stateful model whose watermark moved: one more run, without data
    held_by: Optional[str] = None  # another process writes the model: who (nothing ran)


class Dataflow:
    """The scheduler of the run's on_new_data models (see the module's docstring)."""

    def __init__(self, spark: SparkSession, models: Sequence[ScheduledModel], log: Log,
                 wake: threading.Event):
        self.spark, self.models, self.log, self.wake = spark, list(models), log, wake
        # Each pool thread drives a JVM thread of its own, whose active session Delta needs.
        self.runs_at_once = runs_at_once()
        self._pool = ThreadPoolExecutor(max_workers=self.runs_at_once, thread_name_prefix="dataflow",
                                        initializer=get_or_create_session)
        self._watches: dict[tuple, input_watches.Watch] = {}
        self._readers: dict[tuple, list[ScheduledModel]] = {}
        self._writer: dict[tuple, ScheduledModel] = {}
        self._output_since: dict[tuple, float] = {}
        self._conf_before = session_settings.set_settings(spark, served_conf(spark))
        inputs: dict[tuple, StreamingInput] = {}
        for model in self.models:
            if model.output:
                self._writer[hadoop_fs.file_key(model.output)] = model
            for found in model.inputs:
                key = hadoop_fs.file_key(found.path)
                inputs.setdefault(key, found)
                self._readers.setdefault(key, []).append(model)
        # A served model's table on an object store: its readers hear of its commits from the
        # run that made them, and a slow poll catches what a command writes there meanwhile.
        self._told_on_commit: set[tuple] = set()
        for key, found in inputs.items():
            self._watches[key] = input_watches.watch_for(found, lambda found, key=key: self._remote_watch(found, key))
        now = time.time()
        for model in self.models:
            model.recheck_at = now + self._recheck_seconds(model)
        for model in self.models:
            keys = (hadoop_fs.file_key(found.path) for found in model.inputs)
            model.upstream = tuple(self._writer[key] for key in keys if key in self._writer)
        self._compact_at, vacuum_every = compact_at(), vacuum_every_seconds()
        for model in self.models:  # a model's table (a companion of its writes none)
            if model.output and model.write.config.maintenance.enabled:
                upkeep = Upkeep.of(model.write.config, model.write.target_table, model.output)
                model.upkeep = UpkeepSchedule(upkeep, check_every_runs=max(1, self._compact_at // 4),
                                              vacuum_every=vacuum_every)
        self._slack = self._slack_by_model()

    def step(self) -> None:
        """One pass: finished runs, changed inputs, runs to start, targets missed."""
        for model in self.models:
            if model.running is not None and model.running.done():
                self._finished(model)
            if model.maintaining is not None and model.maintaining.done():
                self._maintained(model)
        now = time.time()
        for key, watch in self._watches.items():
            changed_at = watch.changed_since_last()
            if changed_at is None:
                continue
            for reader in self._readers[key]:
                reader.mark_pending(self._since(key, changed_at, now))
        for model in self.models:  # what a watch may have missed (see RECHECK_SECONDS)
            if now >= model.recheck_at:
                model.recheck_at = now + self._recheck_seconds(model)
                if model.running is None and model.pending_since is None:
                    model.mark_pending(now)
        busy = sum(model.running is not None or model.maintaining is not None for model in self.models)
        jobs = [(self._deadline(model), False, model) for model in self._startable()]
        jobs += [((model.upkeep.deadline(), 0), True, model) for model in self._upkeep_due(now)]
        for _deadline, upkeep, model in sorted(jobs, key=lambda job: job[0]):
            if busy >= self.runs_at_once:
                break
            if upkeep:
                model.maintaining = self._pool.submit(self._maintain, model, model.upkeep.started())
            else:
                model.retry_at = None
                model.running_since, model.pending_since = model.pending_since, None
                model.running = self._pool.submit(self._run, model)
            busy += 1
        self._say_missed_targets(now)

    def _since(self, key: tuple, changed_at: float, now: float) -> float:
        """Since when a change of the input `key` waits: a served model's table carries the time
        its own run's inputs changed (the run that committed it, running or ended); any other
        input, the time of the change."""
        writer = self._writer.get(key)
        if writer is None:
            return min(changed_at, now)
        if writer.running is not None and writer.running_since is not None:
            return writer.running_since
        return self._output_since.get(key, min(changed_at, now))

    def _startable(self) -> list[ScheduledModel]:
        return [model for model in self.models
                if model.pending_since is not None and model.running is None and model.maintaining is None
                and (model.retry_at is None or time.monotonic() >= model.retry_at)]

    def _upkeep_due(self, now: float) -> list[ScheduledModel]:
        return [model for model in self.models
                if model.upkeep is not None and model.running is None and model.maintaining is None
                and model.upkeep.due(now)]

    def _maintain(self, model: ScheduledModel, vacuum: bool) -> Maintained:
        try:
            readers = reader_positions(self.spark)  # the log trim's guard, every pass
            return maintain(self.spark, model.upkeep.upkeep, readers, self._compact_at, vacuum=vacuum)
        finally:
            self.wake.set()

    def _maintained(self, model: ScheduledModel) -> None:
        """A maintenance pass ended: said when it did something; a failure is said and the pass
        tried again later, the model serving on meanwhile (its table is as before the pass)."""
        future, model.maintaining = model.maintaining, None
        error = future.exception()
        if error is not None:
            model.upkeep.failed()
            self.log(f"{model.write.model}: maintenance of its table failed ({root_cause(error)}); "
                     "it serves on, and maintenance is tried again in a few minutes.")
            return
        done = future.result()
        model.upkeep.passes += 1
        if done.compacted or done.vacuumed_hours is not None or done.held:
            model.upkeep.last = done.said()
            self.log(f"Maintained {model.upkeep.last}")

    def _deadline(self, model: ScheduledModel) -> tuple[float, int]:
        """Earliest deadline first: when the change it has waited for longest came, plus its
        slack. Downstream models carry their upstream's oldest change, so a wave is drained
        before the next landing's first hop takes the slot."""
        return (model.pending_since or 0.0) + self._slack[model.name], -self.models.index(model)

    def _slack_by_model(self) -> dict[str, float]:
        """A model's target_lag, or the tightest of the models downstream of it (their data
        passes through it first); `NO_TARGET_SLACK_SECONDS` where none has one: a model with a
        target goes first, the others as soon as the core is free, none starved."""
        slack: dict[str, float] = {}
        for model in reversed(self.models):  # dbt's order: readers after what they read
            readers = self._readers.get(hadoop_fs.file_key(model.output), []) if model.output else []
            candidates = [model.target_lag] if model.target_lag is not None else []
            candidates += [slack[reader.name] for reader in readers if reader.name in slack]
            slack[model.name] = min(candidates, default=NO_TARGET_SLACK_SECONDS)
        return slack

    def _run(self, model: ScheduledModel) -> RunResult:
        try:
            with claim_model(model.write.model) as claimed:
                if not claimed:  # a command attached to this service writes it (driver/)
                    return RunResult(ran=False, held_by=model_holder(model.write.model))
                return self._run_claimed(model)
        finally:
            model.query = None
            self.wake.set()

    def _run_claimed(self, model: ScheduledModel) -> RunResult:
        if model.held_by:
            self.log(f"{model.write.model}: written by {model.held_by} no longer; served again.")
            model.held_by = None
        checkpoint = model.write.checkpoint
        began = time.perf_counter()
        if up_to_date.nothing_new(self.spark, checkpoint, inputs=model.inputs) is not None:
            return RunResult(ran=False)
        checked = time.perf_counter()
        query = model.start(self.spark)
        model.query = query
        started = time.perf_counter()
        query.awaitTermination()
        ended = time.perf_counter()
        model.run_timings = [*model.run_timings[-RUN_TIMINGS_KEPT + 1:],
                             (checked - began, started - checked, ended - checked)]
        return RunResult(ran=True, batch_due=up_to_date.batch_due_without_data(self.spark, checkpoint))

    def _finished(self, model: ScheduledModel) -> None:
        future, model.running = model.running, None
        since, model.running_since = model.running_since, None
        error = future.exception()
        if error is None:
            result = future.result()
            model.failures_in_a_row = 0
            if result.held_by is not None:
                model.mark_pending(since or time.time())  # run once the command is done with it
                model.retry_at = time.monotonic() + HELD_RETRY_SECONDS
                if model.held_by is None:
                    self.log(f"{model.write.model}: {result.held_by} writes it; served again once it is done.")
                model.held_by = result.held_by
                return
            if not result.ran:
                model.skipped += 1
                return
            model.runs += 1
            if model.upkeep is not None:
                model.upkeep.ran()
            model.last_lag = max(0.0, time.time() - since) if since is not None else None
            if model.output:
                key = hadoop_fs.file_key(model.output)
                self._output_since[key] = since or time.time()
                if key in self._told_on_commit:
                    for reader in self._readers.get(key, ()):
                        reader.mark_pending(self._output_since[key])
            if result.batch_due:
                model.mark_pending(since or time.time())
            return
        model.mark_pending(since or time.time())  # its input is still there to take
        reason = self._reason(model, error)
        model.failures_in_a_row += 1
        model.last_failure = reason
        model.retry_at = time.monotonic() + backoff.pause_after(model.failures_in_a_row)
        model.restarts += 1
        self.log(backoff.failure_said(model.name, reason, model.failures_in_a_row, "Running it again", "a run"))

    @staticmethod
    def _reason(model: ScheduledModel, error: BaseException) -> str:
        if isinstance(error, (PySparkException, Py4JJavaError)):
            return str(failure(model.write.model, model.write.checkpoint, error))
        return str(error)

    def _say_missed_targets(self, now: float) -> None:
        for model in self.models:
            if model.target_lag is None:
                continue
            lag = max(model.lag(now), model.last_lag or 0.0 if model.missing else 0.0)
            if lag > model.target_lag:
                if now - model.missed_said_at >= SAY_MISSED_EVERY_SECONDS:
                    model.missed_said_at, model.missing = now, True
                    self.log(f"{model.write.model}: {lag:.1f} s behind its inputs, over its "
                             f"target_lag of {model.target_lag:g} s; {self._holding(model, now)}.")
            elif model.missing and model.lag(now) == 0.0 and (model.last_lag or 0.0) <= model.target_lag:
                model.missing = False
                self.log(f"{model.write.model}: within its target_lag of {model.target_lag:g} s "
                         f"again (its last run ended {model.last_lag or 0.0:.1f} s after its "
                         "inputs changed).")

    def _holding(self, model: ScheduledModel, now: float) -> str:
        """What holds a model that misses its target."""
        busy = [up.write.model for up in model.upstream if up.running is not None or up.pending_since is not None]
        if model.running is not None:
            return (f"its run has taken {now - (model.running_since or now):.1f} s so far"
                    if model.running_since else "its run is in progress")
        if model.retry_at is not None:
            return f"its last run failed ({model.last_failure})"
        if model.waiting_on:
            return f"it waits on {', '.join(model.waiting_on)}, which failed"
        if model.pending_since is not None:
            running = [m.write.model for m in self.models if m.running is not None]
            if not running:
                return "its run is starting"
            return (f"its run waits for {', '.join(running)} to end ({self.runs_at_once} "
                    f"run{'s' if self.runs_at_once > 1 else ''} at a time, {RUNS_AT_ONCE_VARIABLE})")
        if busy:
            return f"its upstream {', '.join(busy)} is still catching up"
        return (f"its last run ended {model.last_lag or 0.0:.1f} s after its inputs changed "
                "(the time of its own run and of its upstream's)")

    def queries(self) -> list[StreamingQuery]:
        return [model.query for model in self.models if model.query is not None]

    def stop(self, stop_between_batches: Callable[[list], None]) -> None:
        """Stop the runs in progress after their current batch; wait for their threads."""
        stop_between_batches(self.queries())
        self._pool.shutdown(wait=True, cancel_futures=True)
        session_settings.set_settings(self.spark, self._conf_before)
        for model in self.models:
            if model.running is not None and model.running.done() and not model.running.cancelled():
                try:
                    self._finished(model)
                except StreamingModelError:
                    pass  # stopping anyway

    def lag_of(self, query_name: str) -> Optional[tuple[float, Optional[float]]]:
        """(lag now, target) of a scheduled query, for the progress table's rows; None if not one."""
        for model in self.models:
            if model.name == query_name:
                return model.lag(), model.target_lag
        return None

    def _remote_watch(self, found: StreamingInput, key: tuple) -> input_watches.Watch:
        spark, path = self.spark, found.path
        every = input_watches.remote_poll_seconds(reader.target_lag for reader in self._readers[key])
        if key in self._writer:
            self._told_on_commit.add(key)
            every = max(every, WRITTEN_HERE_POLL_SECONDS)
        if found.format == "delta":
            log = f"{path.rstrip('/')}/_delta_log"
            return input_watches.PolledWatch(input_watches.NextCommits(
                lambda: delta_log.version_listed(spark, path),
                lambda version: hadoop_fs.is_file(spark, f"{log}/{version:020d}.json")), every)
        return input_watches.PolledWatch(lambda: frozenset(hadoop_fs.files_under(spark, path)), every)

    def _recheck_seconds(self, model: ScheduledModel) -> float:
        """A model with an input watched by `stat` is checked every RECHECK_SECONDS: a folder's
        time may miss a change. Polls of an object store miss none, and each check is requests."""
        local = any(hadoop_fs.local_path(found.path or "") is not None for found in model.inputs)
        return RECHECK_SECONDS if local or not model.inputs else REMOTE_RECHECK_SECONDS


def served_conf(spark: SparkSession) -> dict[str, str]:
    """The settings the scheduler's queries start with while serving."""
    codegen = {} if os.environ.get(CODEGEN_VARIABLE) == "1" else SERVED_RUN_CONF
    reads = {key: value for key, value in SERVED_READ_CONF.items() if spark.conf.get(key, None) is None}
    return {**codegen, **reads}
