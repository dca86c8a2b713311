"""Event-time settings from model config: a watermark and streaming deduplication.

    watermark: {column: recorded_at, delay: '10 minutes'}
    watermark: [{column: recorded_at, delay: '1 hour'}, {column: reported_at, delay: '1 hour'}]
    dedupe: {keys: [recording_id], within_watermark: true}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

from pyspark.sql import DataFrame
from dbt_spark_streaming.errors import ConfigError
from dbt_spark_streaming.config.intervals import EXAMPLES, is_interval
from dbt_spark_streaming.config.stream_reads import SOURCE_VIEW, TABLE, StreamRead, replace_reads, table_input_name



class EventTimeConfigError(ConfigError):
    pass


@dataclass(frozen=True)
class Watermark:
    column: str
    delay: str

    @classmethod
    def list_from_config(cls, model: str, config: Any) -> tuple["Watermark", ...]:
        """One watermark ({column, delay}) or a list of them, one per event-time column."""
        if not config:
            return ()
        entries = config if isinstance(config, (list, tuple)) else [config]
        watermarks = tuple(cls.from_config(model, entry) for entry in entries)
        columns = [watermark.column for watermark in watermarks]
        if len(set(columns)) != len(columns):
            raise EventTimeConfigError(
                f"Model {model}: watermark names column {_first_repeated(columns)!r} twice; "
                "give one delay per event-time column."
            )
        return watermarks

    @classmethod
    def from_config(cls, model: str, config: Any) -> "Watermark":
        column = config.get("column") if isinstance(config, Mapping) else None
        delay = str(config.get("delay", "")) if isinstance(config, Mapping) else ""
        if not column or not is_interval(delay) or set(config) - {"column", "delay"}:
            raise EventTimeConfigError(
                f"Model {model}: watermark {config!r} is not valid. Give "
                "{column: <event-time column>, delay: <interval>}, e.g. {column: recorded_at, "
                "delay: '10 minutes'}, or a list of those, one per event-time column (a "
                f"stream-stream join). Intervals Spark reads: {EXAMPLES}."
            )
        return cls(str(column), delay.strip())

    def apply(self, frame: DataFrame) -> DataFrame:
        return frame.withWatermark(self.column, self.delay)


def _first_repeated(items: list[str]) -> str:
    return next(item for i, item in enumerate(items) if item in items[:i])


@dataclass(frozen=True)
class Dedupe:
    keys: tuple[str, ...]
    within_watermark: bool = True

    @classmethod
    def from_config(cls, model: str, config: Any) -> Optional["Dedupe"]:
        if not config:
            return None
        keys = config.get("keys") if isinstance(config, Mapping) else None
        keys = [keys] if isinstance(keys, str) else keys
        if (
            not isinstance(keys, (list, tuple))
            or not keys
            or not all(isinstance(key, str) for key in keys)
            or set(config) - {"keys", "within_watermark"}
        ):
            raise EventTimeConfigError(
                f"Model {model}: dedupe {config!r} is not valid. Give "
                "{keys: [<column>, ...], within_watermark: true|false}."
            )
        return cls(tuple(keys), bool(config.get("within_watermark", True)))

    def apply(self, frame: DataFrame) -> DataFrame:
        """Within the watermark, state is dropped once no duplicate can arrive any more; without,
        every key is remembered forever."""
        if self.within_watermark:
            return frame.dropDuplicatesWithinWatermark(list(self.keys))
        return frame.dropDuplicates(list(self.keys))


def with_watermarks(
    spark, model: str, sql: str, watermarks: Sequence[Watermark],
    observe: Optional[Callable[[DataFrame, str, bool], DataFrame]] = None,
) -> str:
    """The model's SQL reading each streaming input through a watermarked temp view.

    Each watermark goes on every streaming input that has its column, so the two sides of a
    stream-stream join can each carry their own. A watermark whose column no input has is a
    mistake in the config and stops the model. `observe`: what each input (its frame, its name,
    whether it is a source's view) goes through first, the same frame when nothing
    (writes/unreadable_counts.py counts its unreadable lines); an input neither changes is read
    as it was.

    Done with the DataFrame API: Spark's SQL `WATERMARK ... DELAY OF` clause (4.1) does not
    resolve in a session with Delta's extensions (UNRESOLVED_COLUMN on every column).
    """
    if not watermarks and observe is None:
        return sql
    registered: dict[str, Optional[str]] = {}
    used: set[Watermark] = set()

    def view_over(frame_of, name: str, source_view: bool = False) -> Optional[str]:
        if name not in registered:
            read = frame_of(name)
            frame = observe(read, name, source_view) if observe is not None else read
            for watermark in watermarks:
                if watermark.column in frame.columns:
                    frame = watermark.apply(frame)
                    used.add(watermark)
            view = None
            if frame is not read:
                view = f"{model}__watermarked_{len(registered)}"
                frame.createOrReplaceTempView(view)
            registered[name] = view
        return registered[name]

    def stream_of(read: StreamRead) -> Optional[str]:
        # The name the SQL read had (stream_reads.name_stream_reads), else the table's.
        reader = spark.readStream.options(**read.options).name(read.source_name or table_input_name(read.relation))
        key = (read.relation + (f" with {sorted(read.options.items())}" if read.options else "")
               + (f" identified by {read.source_name}" if read.source_name else ""))
        return view_over(lambda _: reader.table(read.relation), key)

    # The model's streaming inputs: its stream(<table>) reads, then its source views.
    sql = replace_reads(sql, lambda read: stream_of(read) if read.kind == TABLE else None)
    sql = replace_reads(
        sql, lambda read: view_over(spark.table, read.relation, True) if read.kind == SOURCE_VIEW else None
    )
    unused = [watermark.column for watermark in watermarks if watermark not in used]
    if unused:
        inputs = ", ".join(registered) or "none"
        raise EventTimeConfigError(
            f"Model {model}: watermark column {', '.join(map(repr, unused))} is not a column of "
            f"any streaming input (streaming inputs: {inputs}). Name an event-time column of a "
            "stream(...) or streaming source the model reads, or remove that watermark."
        )
    return sql
