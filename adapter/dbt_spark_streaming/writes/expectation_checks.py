"""A model's expectations applied to its stream: each rule evaluated once per row, in the batch.

`checked` turns the model's query into the one the write starts from:

1. every rule's outcome is a column, computed once per row (null counts as failed);
2. Spark's `observe` counts, in the same pass, the rows checked, each rule's failures and the rows
   left out; the counts arrive with the batch's progress (`observedMetrics`, read by
   progress/batch.py), so they reach the live view, the run summary and the progress table with
   everything else Spark reports of the batch;
3. a `fail` rule raises inside the batch's write job for the first row that breaks it: the job
   fails, Delta commits nothing and the checkpoint does not record the batch, so the next run
   processes it again;
4. `drop` rows are filtered out; `quarantine` rows stay, marked, for `splitting_quarantine` to
   write to the quarantine table while the rest goes to the model's own writer.

The quarantine needs two writes of one batch, so the first keeps the batch's rows for the second
(a local checkpoint): the rules and the query above them run once (a second computation would
also count each row twice).
"""

from __future__ import annotations

from typing import Callable, Union

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, Observation
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, NullType

from dbt_spark_streaming.errors import EXPECTATION_FAILED, root_cause
from dbt_spark_streaming.config.expectations import (
    FAILED_COLUMN, OBSERVATION, QUARANTINED_AT_COLUMN, ROWS_CHECKED, ROWS_DROPPED,
    ROWS_QUARANTINED, Expectation, ExpectationConfigError, Expectations, metric_name,
)
from dbt_spark_streaming.jvm import plans
from dbt_spark_streaming.writes.merge import release

ROW_SHOWN_CHARACTERS = 500
_QUARANTINE_FLAG = "__quarantine"

ForeachBatch = Callable[[DataFrame, int], None]


def check_rules(frame: DataFrame, expectations: Expectations) -> None:
    """Each rule parses, resolves against the model's output columns and is a row-level
    condition; checked when the model's query resolves, before any table or checkpoint exists."""
    columns = ", ".join(frame.columns)
    for rule in expectations.rules:
        where = f"Model {expectations.model}: expectation {rule.name!r} ({rule.expression})"
        try:
            outcome = frame.select(F.expr(rule.expression).alias("outcome"))
        except (PySparkException, Py4JJavaError) as error:
            raise ExpectationConfigError(
                f"{where} cannot be checked on the model's rows: {root_cause(error)[:400]}\n"
                f"An expectation is a SQL condition over the model's output columns ({columns})."
            ) from None
        if plans.analyzed_node_name(outcome) == "Aggregate":
            raise ExpectationConfigError(
                f"{where} aggregates rows; an expectation checks each row on its own. Check "
                "aggregates with a data test on the table, or in a model that aggregates."
            )
        kind = outcome.schema[0].dataType
        if not isinstance(kind, (BooleanType, NullType)):
            raise ExpectationConfigError(
                f"{where} gives a {kind.simpleString()}, not true or false. Write a condition "
                "that good rows make true, e.g. 'heartbeat between 20 and 250'."
            )


def checked(
    frame: DataFrame, expectations: Expectations, observation: Union[str, Observation] = OBSERVATION
) -> DataFrame:
    """The model's rows with its expectations applied; the frame as is when it has none.
    `observation`: where the counts go (a stream's progress reports them by name; a batch
    load reads an Observation)."""
    if not expectations:
        return frame
    columns = frame.columns
    outcomes = {rule.name: f"__expectation_{index}" for index, rule in enumerate(expectations.rules)}
    with_outcomes = frame.select(
        *(F.col(f"`{column}`") for column in columns),
        *(F.coalesce(F.expr(rule.expression), F.lit(False)).alias(outcomes[rule.name])
          for rule in expectations.rules),
    )
    failed = {rule.name: ~F.col(outcomes[rule.name]) for rule in expectations.rules}
    quarantined = _any(failed[rule.name] for rule in expectations.with_action("quarantine"))
    dropped = _any(failed[rule.name] for rule in expectations.with_action("drop")) & ~quarantined
    counted = with_outcomes.observe(
        observation,
        F.count(F.lit(1)).alias(ROWS_CHECKED),
        F.count_if(dropped).alias(ROWS_DROPPED),
        F.count_if(quarantined).alias(ROWS_QUARANTINED),
        *(F.count_if(failed[rule.name]).alias(metric_name(rule)) for rule in expectations.rules),
    )
    # Filters on top of one another are evaluated innermost first: every row meets the guard.
    guarded = counted
    fail_rules = expectations.with_action("fail")
    if fail_rules:
        guarded = counted.where(_guard(fail_rules, failed, columns))
    kept = guarded.where(~dropped) if expectations.with_action("drop") else guarded
    internal = list(outcomes.values())
    if not expectations.quarantines:
        return kept.drop(*internal)
    # Not F.filter: a lambda is evaluated row by row outside the generated code, and takes the
    # whole projection out of it with it. Rule names are unique, so a set difference keeps them all.
    names = F.array_except(
        F.array(*(F.when(failed[rule.name], F.lit(rule.name)) for rule in expectations.rules)),
        F.array(F.lit(None).cast("string")),
    )
    return kept.select(
        *(F.col(f"`{column}`") for column in columns),
        F.when(quarantined, names).alias(FAILED_COLUMN),
        quarantined.alias(_QUARANTINE_FLAG),
    )


def splitting_quarantine(
    write_target: ForeachBatch, write_quarantine: ForeachBatch, replaces_quarantine: bool = False
) -> ForeachBatch:
    """A foreachBatch function for a checked stream with quarantine rules: the quarantined rows
    (with the names of the rules they failed and when) to `write_quarantine`, the others to the
    model's own `write_target`. Each writer is idempotent on its own, so a batch replayed after a
    crash between the two is written once to each. A batch with no quarantined row adds no commit
    to the quarantine, unless each batch `replaces_quarantine` (complete mode: then it empties it)."""

    def write(batch: DataFrame, batch_id: int) -> None:
        # The first job computes the batch and keeps its rows for the writes. A local
        # checkpoint keeps them as they are; persist() first encodes every row into compressed
        # columns, the largest part of what the quarantine cost (bench/expectations/). A block
        # lost with an executor fails the batch instead of computing it again: the batch is
        # replayed, and each idempotent write leaves its table with the rows once.
        kept = batch.localCheckpoint(eager=False)
        try:
            quarantined = quarantined_rows(kept)
            if replaces_quarantine or not quarantined.isEmpty():
                write_quarantine(quarantined, batch_id)
            write_target(kept_rows(kept), batch_id)
        finally:
            release(kept)

    return write


def quarantined_rows(frame: DataFrame) -> DataFrame:
    """A checked frame's quarantined rows, as the quarantine table holds them: the model's
    columns, the rules each failed, when."""
    return quarantine_columns(frame.where(F.col(_QUARANTINE_FLAG)))


def kept_rows(frame: DataFrame) -> DataFrame:
    """A checked frame's rows for the model's table."""
    if _QUARANTINE_FLAG not in frame.columns:
        return frame
    return model_columns(frame.where(~F.col(_QUARANTINE_FLAG)))


def quarantine_columns(frame: DataFrame) -> DataFrame:
    """The quarantine table's shape for a checked frame: the model's columns, the rules failed,
    when."""
    return frame.drop(_QUARANTINE_FLAG).withColumn(QUARANTINED_AT_COLUMN, F.current_timestamp())


def model_columns(frame: DataFrame) -> DataFrame:
    """The model's own columns of a checked frame (what its table holds)."""
    return frame.drop(_QUARANTINE_FLAG, FAILED_COLUMN)


def _guard(fail_rules: tuple[Expectation, ...], failed: dict[str, Column], columns: list[str]) -> Column:
    row = F.substring(F.to_json(F.struct(*(F.col(f"`{column}`") for column in columns))), 1, ROW_SHOWN_CHARACTERS)
    guard = F.when(F.lit(False), F.lit(True))
    for rule in fail_rules:
        message = F.concat(
            F.lit(f"{EXPECTATION_FAILED}: {rule.name} ({rule.expression}) on a row: "), row
        )
        guard = guard.when(failed[rule.name], F.raise_error(message))
    return guard.otherwise(F.lit(True))


def _any(conditions) -> Column:
    conditions = list(conditions)
    if not conditions:
        return F.lit(False)
    result = conditions[0]
    for condition in conditions[1:]:
        result = result | condition
    return result
