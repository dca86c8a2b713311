"""Start a model's streaming write into its Delta table and report what it processed."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType
from pyspark.sql.streaming import StreamingQuery
from py4j.protocol import Py4JJavaError

from python_runners.runtime.lifecycle import checkpoint_reset

from python_runners.runtime.lifecycle import checkpoints
from python_runners.runtime.lifecycle import query_changes
from python_runners.runtime.lifecycle import redeploy
from python_runners.runtime.delta import tables as delta_tables
from python_runners.runtime.delta import constraints as delta_constraints
from python_runners.runtime.config.contracts import Contract, with_not_null
from python_runners.runtime.sources import initial_snapshot
from python_runners.runtime.run import interruption
from python_runners.runtime.progress.batch import batches_of
from python_runners.runtime.run.streaming_run import StreamingRun
from python_runners.runtime.delta import catalog as streaming_catalog
from python_runners.runtime.config.event_time import Dedupe
from python_runners.runtime.writes.expectation_checks import (
    checked, model_columns, quarantine_columns, splitting_quarantine,
)
from python_runners.runtime.writes.idempotent_batches import appending_once, overwriting_once
from python_runners.runtime.writes.merge import merge_writer
from python_runners.runtime.writes.apply_changes import applied_said, applying_changes, create_tables_if_missing
from python_runners.runtime.writes.change_rows import FeedShape
from python_runners.runtime.config.cdc import ApplyChanges
from python_runners.runtime.config.expectations import ExpectationCounts, Expectations, expectations_said
from python_runners.runtime.session import claim_lakehouse_for
from python_runners.runtime.config.model import DEFAULT_ROLLBACK_WINDOW, ModelConfig
from python_runners.runtime.errors import StreamingError, StreamingModelError, explain
from python_runners.runtime.writes import batch_errors
from python_runners.runtime.writes import corrupt_lines as corrupt_lines_writes
from python_runners.runtime.sources.corrupt_lines import CorruptLines
from python_runners.runtime.config.triggers import Trigger



@dataclass(frozen=True)
class StreamingWrite:
    model: str
    source_view: str
    target_table: str
    output_mode: str
    trigger: Trigger
    checkpoint: str
    partition_by: Sequence[str] = ()
    table_properties: Mapping[str, str] = field(default_factory=dict)
    dedupe: Dedupe | None = None
    unique_key: Sequence[str] = ()
    append_new_columns: bool = False  # on_schema_change: append_new_columns
    documented: Mapping[str, str] = field(default_factory=dict)  # table properties for the docs
    changes: ApplyChanges | None = None  # a cdc_table's feed settings
    expectations: Expectations = Expectations("")
    contract: Contract | None = None  # contract: {enforced: true}: its NOT NULL and CHECKs on the table
    on_query_change: str = query_changes.DEFAULT_POLICY
    query: query_changes.QueryVersion | None = None  # what the table is written with (recorded on it)
    streamed_models: Sequence[str] = ()  # tables whose redeploy rebuilds this one (redeploy.py)
    rollback_window: str = DEFAULT_ROLLBACK_WINDOW

    @classmethod
    def of_model(cls, config: ModelConfig, source_view: str, target_table: str) -> "StreamingWrite":
        """The write a streaming_table model's checked config asks for."""
        return cls(
            model=config.model,
            source_view=source_view,
            target_table=target_table,
            output_mode=config.output_mode,
            trigger=config.trigger,
            checkpoint=config.checkpoint,
            partition_by=config.partition_by,
            table_properties=dict(config.tblproperties),
            dedupe=config.dedupe,
            unique_key=config.unique_key,
            append_new_columns=config.append_new_columns,
            documented=config.documented(),
            changes=config.changes,
            expectations=config.expectations,
            contract=config.contract,
            on_query_change=config.on_query_change,
            query=config.query,
            streamed_models=config.streamed_models,
            rollback_window=config.rollback_window,
        )

    @property
    def query_name(self) -> str:
        return self.target_table

    @property
    def recorded_on_table(self) -> dict[str, str]:
        """Table properties the write keeps up to date: what the docs show, what the query was."""
        return {**self.documented, **(self.query.properties() if self.query else {})}

    @property
    def quarantine_table(self) -> str | None:
        return self.expectations.quarantine_table(self.target_table)


@dataclass(frozen=True)
class StreamSummary:
    model: str
    batches: int
    input_rows: int
    output_rows: int
    seconds: float
    running: bool
    late_rows: int = 0
    expectations: ExpectationCounts = ExpectationCounts()
    query_changed: str = ""  # what changed in the query since the last run, applied to new rows
    waiting_since_reset: bool = False  # a reset checkpoint whose Delta input has no commit after it yet
    redeployed: str = ""  # what a redeploy before the run did
    applied: str = ""  # a cdc_table's: what its MERGEs did (apply_changes.applied_said)
    corrupt_lines: int = 0  # unreadable source lines kept out of the model's rows, quarantined
    corrupt_lines_table: str = ""  # where (writes/corrupt_lines.py)

    def message(self) -> str:
        if self.waiting_since_reset:
            return ("STREAMED 0 rows in, 0 written: no commit in its Delta input since the "
                    "checkpoint was reset yet; the reset's starting point still holds "
                    "(nothing served until a run finds one)")
        state = "caught up, serving" if self.running else "caught up"
        batches = "1 batch" if self.batches == 1 else f"{self.batches} batches"
        late = f", {self.late_rows} late row{'' if self.late_rows == 1 else 's'} dropped"
        late = late if self.late_rows else ""
        changed = query_changes.applied_note(self.query_changed) if self.query_changed else ""
        return (f"STREAMED {self.input_rows} rows in, {self.output_rows} written{self.applied}{late}"
                f"{expectations_said(self.expectations)}"
                f"{corrupt_lines_writes.said(self.corrupt_lines, self.corrupt_lines_table)}"
                f", {batches} ({state}){changed}{self.redeployed}")


def run_streaming_write(
    spark: SparkSession, write: StreamingWrite, corrupt_lines: Sequence[CorruptLines] = ()
) -> StreamSummary:
    """Process everything available now; with a processing-time trigger then keep the stream running.
    `corrupt_lines`: the sources whose unreadable lines the model does not see, quarantined by
    queries of their own, after the model's (writes/corrupt_lines.py).

    Catching up is its own run-until-caught-up query, so that downstream models in the same
    `dbt run` see the data even while more keeps arriving (waiting for a processing-time query
    to drain would never end under a steady inflow). The served query then continues from the
    same checkpoint.
    """
    started = time.monotonic()
    run = StreamingRun.current()
    progress = run.listen(spark)
    redeployed = redeploy.redeploy_if_due(spark, write, lambda beside: run_streaming_write(spark, beside))
    before = delta_tables.snapshot(spark, write.target_table)
    if write.changes is not None and before.exists:
        write.changes.refuse_shape_change(write.target_table, before.properties)
    changed = None
    if before.exists and checkpoints.has_progress(spark, write.checkpoint):
        changed = query_changes.check(write.model, write.on_query_change, write.query, before.properties)
    with run.display:
        catch_up = start_streaming_write(
            spark, replace(write, trigger=write.trigger.catch_up()), table_exists=before.exists
        )
        try:
            catch_up.awaitTermination()
        except (PySparkException, Py4JJavaError) as error:
            _stop_quietly(catch_up)
            if checkpoint_reset.waiting_for_input(spark, write.checkpoint, error):
                return StreamSummary(write.model, 0, 0, 0, round(time.monotonic() - started, 3),
                                     running=False, waiting_since_reset=True)
            raise failure(write, error) from None
        interruption.refuse_if_interrupted(write.model)  # stopped by Ctrl-C, not caught up
        progress.wait_until_heard(catch_up)
    initial_snapshot.plan_batch_past_initial_snapshot(spark, write.checkpoint)
    after = before.refreshed(spark, write.target_table)
    commits = (delta_tables.commits_since(spark, write.target_table, before.version, after.log)
               if after.version > before.version else [])
    written = delta_tables.rows_written(commits)
    applied = ("" if write.changes is None
               else applied_said(write.changes, delta_tables.merged_rows(commits), catch_up))
    # A new table has them from its creation; an older one gets them (or changes) here, between
    # the two queries, while nothing writes the table.
    streaming_catalog.record(
        spark, write.target_table, write.recorded_on_table, current=after.properties,
        user_metadata=query_changes.history_note(changed) if changed else None,
    )
    quarantined = corrupt_lines_writes.catch_up(spark, write, corrupt_lines, progress)
    summary = replace(summarise(write.model, catch_up, written, time.monotonic() - started),
                      query_changed=changed or "", applied=applied,
                      redeployed=redeployed.said(write.model) if redeployed else "")
    if corrupt_lines:
        summary = replace(summary, corrupt_lines=quarantined,
                          corrupt_lines_table=corrupt_lines_writes.table_of(write.target_table))
    if write.trigger.runs_until_caught_up:
        return summary
    served = start_streaming_write(spark, write, table_exists=True)
    run.keep_serving(write)  # so that serving can start it again from its checkpoint
    corrupt_lines_writes.serve(spark, write, corrupt_lines, run)
    return replace(summary, running=served.isActive)


def start_streaming_write(
    spark: SparkSession, write: StreamingWrite, table_exists: bool | None = None
) -> StreamingQuery:
    """Start the model's query; `table_exists` when the caller already knows it."""
    if table_exists is None:
        table_exists = spark.catalog.tableExists(write.target_table)
    _refuse_running_twice(spark, write)
    interruption.refuse_if_interrupted(write.model)
    claim_lakehouse_for(write.model)
    frame = spark.table(write.source_view)
    if write.dedupe is not None:
        frame = write.dedupe.apply(frame)
    frame = checked(frame, write.expectations)
    checkpoints.check_matches_table(
        spark, write.model, write.target_table, write.checkpoint, table_exists
    )
    properties = {**write.table_properties, **write.recorded_on_table}
    try:
        rows = model_columns(frame).schema
        if write.changes is None:
            delta_tables.create_if_missing(
                spark, write.target_table, with_not_null(rows, write.contract), write.partition_by,
                properties, exists=table_exists,
            )
        else:
            shape = FeedShape(write.changes, with_not_null(rows, write.contract))
            create_tables_if_missing(
                spark, shape, write.target_table, write.partition_by, properties, table_exists
            )
        delta_constraints.add_missing(spark, write.target_table, write.contract)
        writer = (
            frame.writeStream.queryName(write.query_name)
            .outputMode(write.output_mode)
            .option("checkpointLocation", write.checkpoint)
            .trigger(**write.trigger.writer_kwargs())
        )
        if write.changes is None and write.output_mode == "complete" and write.quarantine_table is None:
            if write.append_new_columns:
                writer = writer.option("mergeSchema", "true")
            return writer.format("delta").toTable(write.target_table)
        each_batch = _batch_writer(spark, write, rows)
        if write.quarantine_table is not None:
            each_batch = splitting_quarantine(
                each_batch, _quarantine_writer(spark, write, frame),
                replaces_quarantine=_replaces_quarantine(write),
            )
        batch_errors.forget(write.checkpoint)
        return writer.foreachBatch(batch_errors.kept_for(write.checkpoint, each_batch)).start()
    except (PySparkException, Py4JJavaError) as error:
        raise explain(write.model, error) from None


def failure(write: StreamingWrite, error: BaseException) -> StreamingError:
    """Why the model's query failed (writes/batch_errors.py)."""
    return batch_errors.failure(write.model, write.checkpoint, error)


def _batch_writer(spark: SparkSession, write: StreamingWrite, rows: StructType):
    """The foreachBatch function that writes a batch (of `rows`) into the model's table, once."""
    if write.changes is not None:
        return applying_changes(write.checkpoint, write.target_table, FeedShape(write.changes, rows))
    if write.output_mode == "update":
        return merge_writer(write.checkpoint, write.target_table, write.unique_key)
    location = delta_tables.location(spark, write.target_table)
    if write.output_mode == "complete":
        return overwriting_once(write.checkpoint, location, merge_schema=write.append_new_columns)
    return appending_once(write.checkpoint, location, merge_schema=write.append_new_columns)


def _quarantine_writer(spark: SparkSession, write: StreamingWrite, frame: DataFrame):
    """Quarantined rows are appended once per batch; in complete mode, where the model's table
    is the whole result again each batch, the quarantine holds the current result's rows."""
    table = write.quarantine_table
    delta_tables.create_if_missing(spark, table, quarantine_columns(frame).schema, (), {})
    location = delta_tables.location(spark, table)
    if _replaces_quarantine(write):
        return overwriting_once(write.checkpoint, location, merge_schema=True)
    return appending_once(write.checkpoint, location, merge_schema=True)


def _replaces_quarantine(write: StreamingWrite) -> bool:
    return write.changes is None and write.output_mode == "complete"


def summarise(model: str, query: StreamingQuery, written: int, seconds: float) -> StreamSummary:
    """What this run did; rows written come from the Delta commits (the sink reports -1)."""
    batches = batches_of(query)
    return StreamSummary(
        model=model,
        batches=len(batches),
        input_rows=sum(batch.input_rows for batch in batches),
        output_rows=written,
        seconds=round(seconds, 3),
        running=query.isActive,
        late_rows=sum(batch.late_rows for batch in batches),
        expectations=sum_counts(batch.expectations for batch in batches),
    )


def sum_counts(counts) -> ExpectationCounts:
    total = ExpectationCounts()
    for batch_counts in counts:
        total = total.plus(batch_counts)
    return total


def _refuse_running_twice(spark: SparkSession, write: StreamingWrite) -> None:
    for active in spark.streams.active:
        if active.name == write.query_name:
            raise StreamingModelError(
                f"Model {write.model}: a streaming query writing {write.target_table} is already "
                f"running in this process (id {active.id}). Stop it before starting another."
            )


def _stop_quietly(query: StreamingQuery) -> None:
    try:
        query.stop()
    except Exception:  # the query already failed; its error is the one to report
        pass
