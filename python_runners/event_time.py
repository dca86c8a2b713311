"""Event-time settings from model config: a watermark and streaming deduplication.

    watermark: {column: recorded_at, delay: '10 minutes'}
    dedupe: {keys: [recording_id], within_watermark: true}
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from pyspark.sql import DataFrame

_DELAY = re.compile(r"^\s*\d+\s*(millisecond|second|minute|hour|day)s?\s*$", re.I)


class EventTimeConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Watermark:
    column: str
    delay: str

    @classmethod
    def from_config(cls, model: str, config: Optional[Mapping[str, Any]]) -> Optional["Watermark"]:
        if not config:
            return None
        column, delay = config.get("column"), str(config.get("delay", ""))
        if not column or not _DELAY.match(delay) or set(config) - {"column", "delay"}:
            raise EventTimeConfigError(
                f"Model {model}: watermark {dict(config)!r} is not valid. Give "
                "{column: <event-time column>, delay: '<n> seconds|minutes|hours|days'}, "
                "e.g. {column: recorded_at, delay: '10 minutes'}."
            )
        return cls(str(column), delay.strip())

    def sql_clause(self) -> str:
        """Spark SQL's own clause, placed after a streaming relation."""
        return f"watermark {self.column} delay of interval {self.delay}"

    def apply(self, frame: DataFrame) -> DataFrame:
        return frame.withWatermark(self.column, self.delay)


@dataclass(frozen=True)
class Dedupe:
    keys: tuple[str, ...]
    within_watermark: bool = True

    @classmethod
    def from_config(cls, model: str, config: Optional[Mapping[str, Any]]) -> Optional["Dedupe"]:
        if not config:
            return None
        keys = config.get("keys")
        keys = [keys] if isinstance(keys, str) else list(keys or [])
        if not keys or set(config) - {"keys", "within_watermark"}:
            raise EventTimeConfigError(
                f"Model {model}: dedupe {dict(config)!r} is not valid. Give "
                "{keys: [<column>, ...], within_watermark: true|false}."
            )
        return cls(tuple(keys), bool(config.get("within_watermark", True)))

    def apply(self, frame: DataFrame) -> DataFrame:
        """Within the watermark, state is dropped once no duplicate can arrive any more; without,
        every key is remembered forever."""
        if self.within_watermark:
            return frame.dropDuplicatesWithinWatermark(list(self.keys))
        return frame.dropDuplicates(list(self.keys))


# A model's streaming inputs in its compiled SQL: stream(<table>) and the runner's source views.
_STREAM_TABLE = re.compile(r"\bstream\s*\(\s*([^()]+?)\s*\)", re.I)
_SOURCE_VIEW = re.compile(r"\b(stream_source__\w+)\b")


def with_watermark(spark, model: str, sql: str, watermark: Optional[Watermark]) -> str:
    """The model's SQL reading each streaming input through a watermarked temp view.

    Done with the DataFrame API: Spark 4.1's SQL `WATERMARK ... DELAY OF` clause does not
    resolve in a session with Delta's extensions (UNRESOLVED_COLUMN on every column).
    """
    if watermark is None:
        return sql
    registered: dict[str, str] = {}

    def view_over(frame_of, name: str) -> str:
        if name not in registered:
            view = f"{model}__watermarked_{len(registered)}"
            watermark.apply(frame_of(name)).createOrReplaceTempView(view)
            registered[name] = view
        return registered[name]

    sql = _STREAM_TABLE.sub(lambda m: view_over(spark.readStream.table, m.group(1)), sql)
    return _SOURCE_VIEW.sub(lambda m: view_over(spark.table, m.group(1)), sql)
