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

from python_runners.runtime.changes import ApplyChanges, ChangesConfigError
from python_runners.runtime.errors import StreamingModelError

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
    rows = observed.select(
        *[F.col(column) for column in shape.stored],
        shape.sequence_of().alias(SEQ),
        flag(changes.apply_as_deletes).alias(DELETE),
        flag(changes.apply_as_truncates).alias(TRUNCATE),
    ).dropDuplicates([*changes.keys, SEQ])
    counted = Observation(f"cdc_changes_{batch_id}")
    rows = rows.observe(
        counted,
        F.count(F.lit(1)).alias("changes"),
        F.count(F.when(F.col(DELETE) & ~F.col(TRUNCATE), 1)).alias("deletes"),
        F.max(F.when(F.col(TRUNCATE), F.col(SEQ))).alias("truncated_at"),
    ).localCheckpoint(eager=True)
    missing = observation.get.get("unplaceable", 0)
    if missing:
        raise StreamingModelError(
            f"Model {changes.model}: {missing} change row(s) in this batch have a null key "
            f"({', '.join(changes.keys)}) or a null sequence_by ({', '.join(changes.sequence_by)}), "
            "so they cannot be ordered or applied; the batch was not written. Fix them upstream, "
            "or filter them out in the model (and quarantine them in a model of their own)."
        )
    counts = counted.get
    return ChangeBatch(rows, counts["changes"], counts["deletes"], counts["truncated_at"])
