"""A micro-batch of a CDC feed as the rows both SCD writers apply: the stored columns, the
change's sequence (`__seq`, a struct when sequence_by names several columns) and what the change
is (`__delete`, `__truncate`), each change once however often it was delivered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, Observation, Row
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, StructField, StructType, TimestampType
from py4j.protocol import Py4JJavaError

from dbt_spark_streaming.config.cdc import ApplyChanges, ChangesConfigError
from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.writes.cdc import sequence_ties

SEQ, DELETE, TRUNCATE = "__seq", "__delete", "__truncate"


@dataclass(frozen=True)
class FeedShape:
    """The feed's columns as the table stores them (from the model's query)."""

    changes: ApplyChanges
    feed: StructType

    @property
    def stored(self) -> list[str]:
        return self.changes.stored_columns(self.feed.fieldNames())

    @property
    def values(self) -> list[str]:
        """Stored columns that are not keys."""
        return [column for column in self.stored if column not in self.changes.keys]

    @property
    def tracked(self) -> list[str]:
        return self.changes.tracked_columns(self.stored)

    def sequence_type(self):
        fields = [self.feed[column] for column in self.changes.sequence_by]
        return fields[0].dataType if len(fields) == 1 else StructType(
            [StructField(field.name, field.dataType) for field in fields]
        )

    def table_schema(self) -> StructType:
        """The target table: stored columns, and for scd2 the version's validity."""
        schema = StructType([self.feed[column] for column in self.stored])
        if self.changes.stored_as == "scd2":
            schema = schema.add(self.changes.start_at_column, self.sequence_type(), nullable=False)
            schema = schema.add(self.changes.end_at_column, self.sequence_type(), nullable=True)
        return schema

    def tombstones_schema(self) -> StructType:
        """scd1: the last delete (or truncate, keys null) seen per key, and when it was applied."""
        return StructType(
            [StructField(key, self.feed[key].dataType) for key in self.changes.keys]
            + [StructField(SEQ, self.sequence_type()), StructField("__deleted_at", TimestampType()),
               StructField(TRUNCATE, BooleanType())]
        )

    def sequence_of(self, alias: str | None = None) -> Column:
        """The sequence of a stored row (target columns, or the feed's)."""
        columns = [F.col(f"{alias}.{c}" if alias else c) for c in self.changes.sequence_by]
        return columns[0] if len(columns) == 1 else F.struct(
            *[column.alias(name) for column, name in zip(columns, self.changes.sequence_by)]
        )


def check_feed(frame: DataFrame, changes: ApplyChanges) -> None:
    """The settings against the model's query: columns exist, conditions parse and resolve."""
    changes.check_columns(frame.columns)
    for setting in ("apply_as_deletes", "apply_as_truncates"):
        condition = getattr(changes, setting)
        if condition:
            try:
                frame.select(F.expr(condition).cast("boolean"))
            except (PySparkException, Py4JJavaError) as error:
                first = str(error).strip().splitlines()[0][:300]
                raise ChangesConfigError(
                    f"Model {changes.model}: {setting} {condition!r} is not a condition over the "
                    f"model's columns ({', '.join(frame.columns)}). Spark said: {first}"
                ) from None


@dataclass(frozen=True)
class ChangeBatch:
    """A micro-batch's changes, with what was counted on the way (no job of their own)."""

    rows: DataFrame
    changes: int  # each once, repeats left out
    deletes: int  # of keys (not truncates)
    truncated_at: Any  # the sequence of the batch's latest truncate, or None
    tied: int = 0  # changes left out of the batch for a tied one (on_sequence_tie keep_last_landed)


def literal(value: Any) -> Column:
    """A sequence value read back from Spark as a literal (a Row for a struct sequence)."""
    if isinstance(value, Row):
        return F.struct(*[F.lit(item).alias(name) for name, item in value.asDict().items()])
    return F.lit(value)


def change_rows(batch: DataFrame, shape: FeedShape, batch_id: int) -> ChangeBatch:
    """The batch's changes, computed once (localCheckpoint) and checked: a change without a key
    or a sequence cannot be placed, so the batch fails rather than dropping it."""
    changes = shape.changes
    flag = lambda condition: F.coalesce(F.expr(condition), F.lit(False)) if condition else F.lit(False)  # noqa: E731
    truncate = flag(changes.apply_as_truncates)
    unplaceable = F.lit(False)
    for column in changes.keys:  # a truncate is of every key: it needs none
        unplaceable = unplaceable | (batch[column].isNull() & ~truncate)
    for column in changes.sequence_by:
        unplaceable = unplaceable | batch[column].isNull()
    observation = Observation(f"cdc_rows_{batch_id}")
    observed = batch.observe(observation, F.count(F.when(unplaceable, 1)).alias("unplaceable"))
    keys = list(changes.keys)
    others = [column for column in shape.stored if column not in keys]
    # One change per key and sequence: repeats of one change are one; different changes are a
    # tie (sequence_ties.py), of which the greatest is kept here and the others counted.
    versions = observed.groupBy(*[F.col(key) for key in keys], shape.sequence_of().alias(SEQ)).agg(
        F.collect_set(F.struct(
            *[F.col(column) for column in others],
            flag(changes.apply_as_deletes).alias(DELETE),
            flag(changes.apply_as_truncates).alias(TRUNCATE),
        )).alias("__versions")
    )
    tied = F.size("__versions") - 1
    counted = Observation(f"cdc_changes_{batch_id}")
    rows = versions.observe(
        counted,
        F.count(F.lit(1)).alias("changes"),
        F.sum(tied).alias("tied"),
        F.min(F.when(tied > 0, F.to_json(F.struct(*keys, F.col(SEQ).alias("sequence_by"), "__versions")))).alias("tie"),
    ).select(*keys, SEQ, F.array_max("__versions").alias("__kept")).select(
        *[F.col(key) if key in keys else F.col(f"__kept.`{key}`").alias(key) for key in shape.stored],
        SEQ, F.col(f"__kept.{DELETE}").alias(DELETE), F.col(f"__kept.{TRUNCATE}").alias(TRUNCATE),
    )
    summed = Observation(f"cdc_kinds_{batch_id}")
    rows = rows.observe(
        summed,
        F.count(F.when(F.col(DELETE) & ~F.col(TRUNCATE), 1)).alias("deletes"),
        F.max(F.when(F.col(TRUNCATE), F.col(SEQ))).alias("truncated_at"),
    ).localCheckpoint(eager=True)
    missing = _metrics(observation).get("unplaceable", 0)
    if missing:
        raise StreamingModelError(
            f"Model {changes.model}: {missing} change row(s) in this batch have a null key "
            f"({', '.join(changes.keys)}) or a null sequence_by ({', '.join(changes.sequence_by)}), "
            "so they cannot be ordered or applied; the batch was not written. Fix them upstream, "
            "or filter them out in the model (and quarantine them in a model of their own)."
        )
    counts, kinds = _metrics(counted), _metrics(summed)
    tied_in_batch = int(counts.get("tied") or 0)
    if tied_in_batch and changes.on_sequence_tie == "fail":
        sequence_ties.refuse(changes.model, tied_in_batch, "in one batch", counts["tie"])
    return ChangeBatch(rows, counts.get("changes", 0), kinds.get("deletes", 0), kinds.get("truncated_at"), tied_in_batch)


def observed_metrics(observation: Observation) -> dict:
    """An observation's values, {} for a plan Spark knew to be empty (_metrics)."""
    return _metrics(observation)


def _metrics(observation: Observation) -> dict:
    """An observation's values; none for a batch Spark knew to be empty when planning it (a
    Delta commit without rows, say a table property set), whose observing step its optimizer
    removed with the rest of the plan."""
    try:
        return observation.get
    except Py4JJavaError as error:
        if "toPyRow" not in str(error):
            raise
        return {}
