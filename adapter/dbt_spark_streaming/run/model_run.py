"""One streaming model's run, step by step: the one place that says in which order things happen.

1. a redeploy, if one is due (or left half done by a killed run): the new version built beside
   the table until it has caught up, then swapped in (lifecycle/redeploy.py);
2. the table's recorded shape and query against the model's: a cdc_table's settings that cannot
   change in place stop the run, a changed query meets its `on_query_change` policy, and one its
   checkpoint cannot take (its inputs, its state) stops the run (lifecycle/query_fit.py);
3. nothing new in its inputs since its last batch (and no batch due without data): no query
   started, the model said to be up to date (lifecycle/up_to_date.py);
4. else the catch-up: the model's query started with its trigger's catch-up form, awaited; a reset
   checkpoint still waiting for its Delta input is said, not failed;
   past an initial snapshot, so the next start does not rebuild it (sources/initial_snapshot.py);
   the unreadable lines of its sources, into their quarantine (writes/corrupt_lines.py);
5. what the table now records: the docs' properties and the query (delta/catalog.py); a run
   that wrote nothing keeps the trigger it says it was written with, so a trigger switch commits
   nothing that would wake the models downstream;
6. with a processing-time trigger, the served query (and its companions), kept on the run so
   that serving can start them again; with on_new_data, the model (and its companions) kept for
   the serving loop's scheduler, which runs them again when an input commits (serve/dataflow.py).

writes/ only builds and starts queries; everything that knows about the run, redeploys and
Ctrl-C is here.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Callable, Mapping, Optional, Sequence

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from dbt_spark_streaming.config.streaming_table import TRIGGER_PROPERTY
from dbt_spark_streaming.config.triggers import AVAILABLE_NOW, Trigger
from dbt_spark_streaming.delta import catalog as streaming_catalog
from dbt_spark_streaming.delta import constraints as delta_constraints
from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.errors import StreamingError
from dbt_spark_streaming.jvm import callback_connections, plans
from dbt_spark_streaming.jvm.checkpoint_log import record_shuffle_partitions
from dbt_spark_streaming.lifecycle.reset import checkpoint_reset
from dbt_spark_streaming.lifecycle import (
    checkpoint_names, checkpoints, query_changes, query_fit, query_inputs, redeploy, up_to_date,
)
from dbt_spark_streaming.progress.recorder import ProgressRecorder
from dbt_spark_streaming.serve import dataflow, input_watches
from dbt_spark_streaming.run.streaming_run import StreamingRun
from dbt_spark_streaming.run.summary import StreamSummary, summarise
from dbt_spark_streaming.session import claim_lakehouse_for, claim_table
from dbt_spark_streaming.sources import initial_snapshot
from dbt_spark_streaming.sources.corrupt_lines import CorruptLines
from dbt_spark_streaming.writes import batch_errors, commit_faults
from dbt_spark_streaming.writes.cdc.apply_changes import applied_said
from dbt_spark_streaming.writes.corrupt_lines import CorruptLinesWrite, table_of
from dbt_spark_streaming.writes.streaming import StreamingWrite, start_streaming_write, streaming_frame


def run_streaming_model(
    spark: SparkSession, run: StreamingRun, write: StreamingWrite, corrupt_lines: Sequence[CorruptLines] = (),
    known_up_to_date: Optional[up_to_date.UpToDate] = None, resolve_view: Callable[[], None] = lambda: None,
) -> StreamSummary:
    """Process everything available now; with a processing-time trigger then keep the stream running.
    `corrupt_lines`: the sources whose unreadable lines the model does not see, quarantined by
    queries of their own, after the model's (writes/corrupt_lines.py). `known_up_to_date`: found
    from the query's remembered inputs before its SQL was resolved (lifecycle/query_inputs.py);
    its view is then made by `resolve_view` only if the run needs it after all.

    Catching up is its own run-until-caught-up query, so that downstream models in the same
    `dbt run` see the data even while more keeps arriving (waiting for a processing-time query
    to drain would never end under a steady inflow). The served query then continues from the
    same checkpoint.
    """
    started = time.monotonic()
    claim_table(write.model, write.target_table)
    progress = run.listen(spark)
    resolve_view = _once(resolve_view)
    redeployed = _redeploy_if_due(spark, run, write, resolve_view, progress)
    summary = _process_available(spark, run, write, corrupt_lines, progress, resolve_view,
                                 known_up_to_date=None if redeployed else known_up_to_date,
                                 must_run=redeployed is not None)
    summary = replace(summary, seconds=round(time.monotonic() - started, 3),
                      redeployed=redeployed.said(write.model) if redeployed else "")
    if summary.waiting_since_reset or write.trigger.runs_until_caught_up:
        return summary
    if write.trigger.on_new_data:
        write = _schedule(spark, run, write, corrupt_lines)
        if write.trigger.on_new_data:
            return replace(summary, running=True)
    served = _serve(spark, run, write, lambda spark: start_model_query(spark, run, write, table_exists=True))
    for source_lines in corrupt_lines:
        companion = CorruptLinesWrite.beside(write, source_lines)
        _serve(spark, run, companion, lambda spark, companion=companion: start_companion(spark, run, companion))
    return replace(summary, running=served.isActive)


def _process_available(
    spark: SparkSession, run: StreamingRun, write: StreamingWrite, corrupt_lines: Sequence[CorruptLines],
    progress: ProgressRecorder, resolve_view: Callable[[], None],
    known_up_to_date: Optional[up_to_date.UpToDate], must_run: bool,
) -> StreamSummary:
    """Steps 2 to 5: the table's recorded shape and query against the model's, then nothing new
    (or `known_up_to_date`) or the catch-up, then what the table records. `must_run`: a table
    just swapped in by a redeploy is caught up again from its checkpoint, whatever it looks like."""
    before = delta_tables.snapshot(spark, write.target_table)
    if before.exists:  # a checkpoint from before names gets them now (once), whatever the run does
        checkpoint_names.prepare_before_start(
            spark, write.model, write.checkpoint, lambda: _resolved_inputs(spark, write, resolve_view))
    if write.config.changes is not None and before.exists:
        write.config.changes.refuse_shape_change(write.target_table, before.properties)
    changed = None
    if before.exists and checkpoints.has_progress(spark, write.checkpoint):
        changed = query_changes.check(write.model, write.config.on_query_change, write.config.query, before.properties)
    if changed:
        resolve_view()
        query_fit.refuse_if_unfit(spark, write.model, write.checkpoint, streaming_frame(spark, write),
                                  write.config.output_mode, changed)
    idle = (None if must_run or not before.exists
            else known_up_to_date or _nothing_new(spark, write, corrupt_lines))
    if idle is None:
        resolve_view()
        summary, properties = _catch_up(spark, run, write, corrupt_lines, before, progress)
        if summary.waiting_since_reset:
            return summary
    else:
        # as the write would before starting its query: a contract given since the last run
        delta_constraints.add_missing(spark, write.target_table, write.config.contract)
        if not up_to_date.already_recorded(spark, write.checkpoint, idle.batch_id):
            run.recorder.record_up_to_date(
                write.query_name, idle.batch_id, idle.seconds, idle.inputs,
                once_written=lambda spark: up_to_date.mark_recorded(spark, write.checkpoint, idle.batch_id),
            )
        summary, properties = StreamSummary(write.model, 0, 0, 0, 0.0, running=False, up_to_date=idle), before.properties
    # A new table has them from its creation; an older one gets them (or changes) here, between
    # the two queries, while nothing writes the table.
    recorded = write.recorded_on_table
    if idle is not None and TRIGGER_PROPERTY in properties:
        recorded = {**recorded, TRIGGER_PROPERTY: properties[TRIGGER_PROPERTY]}
    streaming_catalog.record(
        spark, write.target_table, recorded, current=properties,
        user_metadata=query_changes.history_note(changed) if changed else None,
    )
    return replace(summary, query_changed=changed or "")


def _catch_up(
    spark: SparkSession, run: StreamingRun, write: StreamingWrite, corrupt_lines: Sequence[CorruptLines],
    before: delta_tables.TableSnapshot, progress: ProgressRecorder,
) -> tuple[StreamSummary, Mapping[str, str]]:
    """The model's query run with its trigger's catch-up form, then its unreadable lines': what
    they did, and the table's properties after."""
    started = time.monotonic()
    with run.display:
        catch_up = start_model_query(spark, run, write.with_trigger(write.trigger.catch_up()),
                                     table_exists=before.exists)
        try:
            catch_up.awaitTermination()
        except (PySparkException, Py4JJavaError) as error:
            _stop_quietly(catch_up)
            if checkpoint_reset.waiting_for_input(spark, write.checkpoint, error):
                return StreamSummary(write.model, 0, 0, 0, 0.0, running=False, waiting_since_reset=True), {}
            raise failure(write, error) from None
        run.refuse_if_interrupted(write.model)  # stopped by Ctrl-C, not caught up
        progress.wait_until_heard(catch_up)
        if write.writes_through_delta_sink:
            commit_faults.after_sink_commit(write.target_table, write.checkpoint)
    initial_snapshot.plan_batch_past_initial_snapshot(spark, write.checkpoint)
    record_shuffle_partitions(spark, write.checkpoint)  # the checkpoint left whole for its next start
    after = before.refreshed(spark, write.target_table)
    commits = (delta_tables.commits_since(spark, write.target_table, before.version, after.log)
               if after.version > before.version else [])
    applied = ("" if write.config.changes is None
               else applied_said(write.config.changes, delta_tables.merged_rows(commits), catch_up))
    summary = replace(summarise(write.model, catch_up, delta_tables.rows_written(commits), time.monotonic() - started,
                                spark.table(write.source_view).columns), applied=applied)
    if corrupt_lines:
        quarantined = _catch_up_corrupt_lines(spark, run, write, corrupt_lines, progress)
        summary = replace(summary, corrupt_lines=quarantined, corrupt_lines_table=table_of(write.target_table))
    return summary, after.properties


def _resolved_inputs(spark: SparkSession, write: StreamingWrite, resolve_view: Callable[[], None]):
    resolve_view()
    return plans.streaming_inputs(streaming_frame(spark, write))


def _nothing_new(
    spark: SparkSession, write: StreamingWrite, corrupt_lines: Sequence[CorruptLines]
) -> Optional[up_to_date.UpToDate]:
    """Whether neither the model's query nor its unreadable lines' queries would run a batch now
    (lifecycle/up_to_date.py)."""
    inputs = plans.streaming_inputs(spark.table(write.source_view))
    if write.inputs_key:
        query_inputs.remember(spark, write.checkpoint, write.inputs_key, inputs, len(corrupt_lines))
    idle = up_to_date.nothing_new(spark, write.checkpoint, inputs=inputs)
    for source_lines in corrupt_lines if idle is not None else ():
        companion = CorruptLinesWrite.beside(write, source_lines)
        if up_to_date.nothing_new(spark, companion.checkpoint, source_lines.frame(spark)) is None:
            return None
    return idle


def start_model_query(spark: SparkSession, run: StreamingRun, write: StreamingWrite, table_exists: bool) -> StreamingQuery:
    """Start the model's query, unless the run was interrupted, another process holds the
    lakehouse, or its checkpoint and table disagree (either one gone: rows would be lost or
    written twice)."""
    run.refuse_if_interrupted(write.model)
    claim_lakehouse_for(write.model, write.target_table)
    checkpoints.check_matches_table(spark, write.model, write.target_table, write.checkpoint, table_exists)
    checkpoint_names.prepare_before_start(
        spark, write.model, write.checkpoint, lambda: plans.streaming_inputs(streaming_frame(spark, write)))
    checkpoint_names.clear_unfinished_first_entry(spark, write.checkpoint)
    callback_connections.close_stale(spark)  # those of the queries before, whose threads ended
    return start_streaming_write(spark, write, table_exists=table_exists)


def start_companion(
    spark: SparkSession, run: StreamingRun, companion: CorruptLinesWrite, trigger: Optional[Trigger] = None
) -> StreamingQuery:
    run.refuse_if_interrupted(companion.model)
    claim_lakehouse_for(companion.model, companion.target_table)
    checkpoint_names.prepare_before_start(
        spark, companion.model, companion.checkpoint, lambda: plans.streaming_inputs(companion.lines.frame(spark)))
    checkpoint_names.clear_unfinished_first_entry(spark, companion.checkpoint)
    callback_connections.close_stale(spark)
    return companion.start(spark, trigger)


def failure(write: StreamingWrite | CorruptLinesWrite, error: BaseException) -> StreamingError:
    """Why the model's query (or a companion's) failed (writes/batch_errors.py)."""
    return batch_errors.failure(write.model, write.checkpoint, error)


def _redeploy_if_due(
    spark: SparkSession, run: StreamingRun, write: StreamingWrite, resolve_view: Callable[[], None],
    progress: ProgressRecorder,
) -> Optional[redeploy.Redeployed]:
    """Step 1: the new version built beside the table, from the start of its inputs, until it
    has caught up, then swapped in; None when no redeploy is due."""
    pending = redeploy.due(spark, write)
    if pending is None:
        return None
    resolve_view()
    built = _process_available(spark, run, redeploy.beside(write), (), progress, lambda: None,
                               known_up_to_date=None, must_run=False)
    return redeploy.swap_in(spark, write, pending, built.output_rows)


def _catch_up_corrupt_lines(
    spark: SparkSession, run: StreamingRun, write: StreamingWrite, lines: Sequence[CorruptLines],
    progress: ProgressRecorder,
) -> int:
    """The unreadable lines that landed since the last run, into the model's quarantine of them,
    one source after the other; how many."""
    if not lines:
        return 0
    table = table_of(write.target_table)
    before = delta_tables.snapshot(spark, table)
    for source_lines in lines:
        companion = CorruptLinesWrite.beside(write, source_lines)
        query = start_companion(spark, run, companion, companion.trigger.catch_up())
        try:
            query.awaitTermination()
        except (PySparkException, Py4JJavaError) as error:
            _stop_quietly(query)
            raise failure(companion, error) from None
        run.refuse_if_interrupted(write.model)
        progress.wait_until_heard(query)
    after = before.refreshed(spark, table)
    return delta_tables.rows_written_since(spark, table, before.version, latest=after.version, log=after.log)


def _serve(spark: SparkSession, run: StreamingRun, write, start) -> StreamingQuery:
    query = start(spark)
    run.keep_serving(write, start)  # so that serving can start it again from its checkpoint
    return query


def _schedule(
    spark: SparkSession, run: StreamingRun, write: StreamingWrite, corrupt_lines: Sequence[CorruptLines]
) -> StreamingWrite:
    """An on_new_data model, and its unreadable lines' queries, kept for the serving loop's
    scheduler. Returns the write; one with an input no watch can follow (Kafka, a glob) comes
    back with a processing-time trigger, to be served as a query of its own."""
    inputs = tuple(plans.streaming_inputs(spark.table(write.source_view)))
    companions = [(CorruptLinesWrite.beside(write, lines), tuple(plans.streaming_inputs(lines.frame(spark))))
                  for lines in corrupt_lines]
    unwatched = [found for found in (*inputs, *(i for _c, ins in companions for i in ins))
                 if not input_watches.watchable(found)]
    if unwatched:
        interval = dataflow.polling_interval(write.config.target_lag_seconds)
        print(f"{write.model}: trigger on_new_data, but it reads "
              f"{', '.join(found.path or found.format for found in unwatched)}, whose commits "
              f"cannot be watched: served as a query polling every {interval} instead.", flush=True)
        return write.with_trigger(Trigger("processing_time", interval))
    target_lag = write.config.target_lag_seconds
    run.keep_scheduled(dataflow.ScheduledModel(
        write, lambda spark: start_model_query(spark, run, write.with_trigger(AVAILABLE_NOW), table_exists=True),
        inputs, delta_tables.location(spark, write.target_table), target_lag,
    ))
    for companion, companion_inputs in companions:
        run.keep_scheduled(dataflow.ScheduledModel(
            companion, lambda spark, companion=companion: start_companion(spark, run, companion, AVAILABLE_NOW),
            companion_inputs, None, target_lag,
        ))
    return write


def _stop_quietly(query: StreamingQuery) -> None:
    try:
        query.stop()
    except Exception:  # the query already failed; its error is the one to report
        pass


def _once(action: Callable[[], None]) -> Callable[[], None]:
    done = threading.Event()

    def once() -> None:
        if not done.is_set():
            done.set()
            action()

    return once
