"""The range of a micro-batch's unique_key values, as a predicate a MERGE can skip target files by.

A MERGE on `target.k <=> batch.k` alone reads every data file of the target to find the matching
rows. Delta skips files by their min/max statistics only for predicates that compare a target
column with constants, so the batch's own min and max of each key column go into the condition
as constants: a batch touching the latest time windows then reads the few files holding those
windows. The bounds are aggregates the caller computes with the batch (one pass, see
merge_writes.py), then turned into the predicate here.

Bounds are rendered from exact values Spark hands back as digits or hex (micros since the epoch,
days, hex of a string's bytes), so no value is ever quoted into SQL and no time zone is involved.
A key of any other type (floating point, boolean, binary, arrays, strings with a collation) gets
no bound: still correct, only not narrowed. Struct keys (a `window` column) are bounded by their
fields, which Delta keeps statistics for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ByteType, DataType, DateType, DecimalType, IntegerType, LongType, ShortType, StringType,
    StructType, TimestampNTZType, TimestampType,
)

# What a min/max rendered as text may contain; anything else is not put into SQL (no bound).
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_DIGITS = re.compile(r"-?[0-9]+")
_HEX = re.compile(r"[0-9A-F]*")
_LOCAL_TIME = re.compile(r"[-+]?[0-9]+-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?")


@dataclass(frozen=True)
class _Rendering:
    as_text: str  # SQL over {value}, e.g. cast(unix_micros({value}) as string)
    as_value: str  # SQL over {text} and {type}, e.g. timestamp_micros({text}): folded to a constant
    allowed: re.Pattern


# Per key type: how Spark renders the min/max as text, and the SQL that turns it back into the value.
_EXACT_TEXT = _Rendering("cast({value} as string)", "cast('{text}' as {type})", _NUMBER)
_RENDERINGS = {
    ByteType: _EXACT_TEXT, ShortType: _EXACT_TEXT, IntegerType: _EXACT_TEXT,
    LongType: _EXACT_TEXT, DecimalType: _EXACT_TEXT,
    DateType: _Rendering("cast(unix_date({value}) as string)", "date_from_unix_date({text})", _DIGITS),
    TimestampType: _Rendering("cast(unix_micros({value}) as string)", "timestamp_micros({text})", _DIGITS),
    TimestampNTZType: _Rendering("cast({value} as string)", "cast('{text}' as timestamp_ntz)", _LOCAL_TIME),
    StringType: _Rendering("hex({value})", "cast(unhex('{text}') as string)", _HEX),
}


@dataclass(frozen=True)
class KeyField:
    """A key column, or a field inside a struct key column, with a type Delta keeps min/max for."""

    path: tuple[str, ...]
    data_type: DataType

    def sql(self, alias: Optional[str]) -> str:
        parts = [f"`{part.replace('`', '``')}`" for part in self.path]
        return ".".join([alias, *parts] if alias else parts)

    @property
    def rendering(self) -> _Rendering:
        return _RENDERINGS[type(self.data_type)]


@dataclass(frozen=True)
class BatchBounds:
    rows: int
    predicate: Optional[str]  # on the target alias; None when no key could be bounded


def key_fields(schema: StructType, unique_key: Sequence[str]) -> list[KeyField]:
    by_name = {field.name.lower(): field for field in schema.fields}  # as Spark resolves names
    return [
        found for key in unique_key if key.lower() in by_name
        for found in _boundable(by_name[key.lower()].dataType, (by_name[key.lower()].name,))
    ]


def _boundable(data_type: DataType, path: tuple[str, ...]) -> list[KeyField]:
    if isinstance(data_type, StructType):
        return [found for field in data_type.fields
                for found in _boundable(field.dataType, (*path, field.name))]
    if type(data_type) not in _RENDERINGS or (isinstance(data_type, StringType) and data_type != StringType()):
        return []  # floating point (NaN, -0.0), collated strings, ...: compared otherwise than min/max
    return [KeyField(path, data_type)]


def bound_aggregates(fields: Sequence[KeyField]) -> list[Column]:
    """The row count and, per key field, its min and max as text and whether any is null."""
    aggregates = [F.count(F.lit(1)).alias("rows")]
    for index, field in enumerate(fields):
        value = field.sql(None)
        aggregates += [
            F.expr(field.rendering.as_text.format(value=f"min({value})")).alias(f"min{index}"),
            F.expr(field.rendering.as_text.format(value=f"max({value})")).alias(f"max{index}"),
            F.expr(f"max({value} is null)").alias(f"null{index}"),
        ]
    return aggregates


def batch_bounds(
    fields: Sequence[KeyField], values: Mapping[str, Any], target: str = "target"
) -> BatchBounds:
    """From bound_aggregates' values: the batch's row count and the predicate on `target` that
    every row matching the batch satisfies (each key field between the batch's min and max, or
    null where the batch has nulls)."""
    predicates = [
        predicate for index, field in enumerate(fields)
        for predicate in [_field_predicate(field, field.sql(target), values[f"min{index}"],
                                           values[f"max{index}"], bool(values[f"null{index}"]))]
        if predicate
    ]
    return BatchBounds(rows=int(values["rows"]), predicate=" and ".join(predicates) or None)


def _field_predicate(
    field: KeyField, column: str, low: Optional[str], high: Optional[str], has_null: bool
) -> Optional[str]:
    if low is None or high is None:
        return f"{column} is null" if has_null else None  # every value null (or an empty batch)
    rendering = field.rendering
    if not (rendering.allowed.fullmatch(low) and rendering.allowed.fullmatch(high)):
        return None
    type_name = field.data_type.simpleString()
    between = (f"{column} between {rendering.as_value.format(text=low, type=type_name)} "
               f"and {rendering.as_value.format(text=high, type=type_name)}")
    return f"({between} or {column} is null)" if has_null else between
