"""One micro-batch's progress as Spark reports it (StreamingQueryProgress), read in one place.

Every part that looks at a batch (the live view, the run summary, the progress table, the status
file, the serving loop, the benchmarks) reads it through `BatchProgress.from_progress`, so that each
field has one rule:

- rates (`inputRowsPerSecond`, `processedRowsPerSecond`): NaN or infinite (no time elapsed),
  missing (the JVM's JSON leaves NaN out) or null -> None
- the watermark: Spark's starting value 1970-01-01T00:00:00.000Z (no event seen yet), or none
  reported (a query without a watermark) -> None
- late rows: `numRowsDroppedByWatermark` summed over the state operators; missing -> 0
- counts (`numInputRows`, state rows): missing or null -> 0
- rows written: the sink's `numOutputRows`; -1 (the sink does not say, as Delta's) -> None
- times: UTC, time-zone aware
- expectations: the counts under observedMetrics' "expectations" (writes/expectation_checks.py);
  a query without expectations has none
- unreadable lines: the counts under observedMetrics' "unreadable_lines_<n>", by corrupt-record
  column (writes/unreadable_counts.py); a query that observes none has an empty mapping
- a batch ran (`ran_a_batch`): it has a batch id and an `addBatch` phase; Spark also reports
  triggers that found no new data (every 10 s while idle), which are not batches.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Mapping, Optional, Union

from dbt_spark_streaming.config.expectations import OBSERVATION, ExpectationCounts
from dbt_spark_streaming.config.sources import UNREADABLE_OBSERVATION_PREFIX

# Spark's watermark before any event has been seen
NO_WATERMARK = datetime(1970, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class SourceProgress:
    description: str
    input_rows: int
    input_rows_per_second: Optional[float]
    processed_rows_per_second: Optional[float]

    @classmethod
    def from_progress(cls, source: Mapping[str, Any]) -> "SourceProgress":
        return cls(
            description=str(source.get("description") or ""),
            input_rows=_count(source.get("numInputRows")),
            input_rows_per_second=_rate(source.get("inputRowsPerSecond")),
            processed_rows_per_second=_rate(source.get("processedRowsPerSecond")),
        )


@dataclass(frozen=True)
class BatchProgress:
    query_name: str  # "" for a query without a name
    query_id: Optional[str]
    run_id: Optional[str]
    batch_id: Optional[int]
    timestamp: Optional[datetime]  # when the trigger started, UTC
    input_rows: int
    input_rows_per_second: Optional[float]
    processed_rows_per_second: Optional[float]
    durations_ms: Mapping[str, int] = field(default_factory=dict, hash=False)  # per phase
    watermark: Optional[datetime] = None  # UTC; None before the first event or without one
    late_rows: int = 0  # dropped by the watermark, over all state operators
    state_rows: int = 0  # rows held in state, over all state operators
    state_rows_updated: int = 0
    rows_written: Optional[int] = None  # the sink's count; None when it does not say
    sources: tuple[SourceProgress, ...] = ()
    expectations: ExpectationCounts = ExpectationCounts()
    unreadable_lines: Mapping[str, int] = field(default_factory=dict)  # corrupt-record column -> rows
    raw: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False, repr=False)

    @classmethod
    def from_progress(cls, progress: Union["BatchProgress", str, bytes, Mapping[str, Any]]) -> "BatchProgress":
        """From the progress as JSON text, as a dict (json.loads of it, a listener event's), or
        pyspark's StreamingQueryProgress (what query.recentProgress gives); a BatchProgress as is."""
        if isinstance(progress, BatchProgress):
            return progress
        raw = _as_json_dict(progress)
        operators = [op for op in raw.get("stateOperators") or [] if isinstance(op, Mapping)]
        durations = raw.get("durationMs") or {}
        sink = raw.get("sink") or {}
        written = sink.get("numOutputRows") if isinstance(sink, Mapping) else None
        return cls(
            query_name=str(raw.get("name") or ""),
            query_id=_text(raw.get("id")),
            run_id=_text(raw.get("runId")),
            batch_id=None if raw.get("batchId") is None else int(raw["batchId"]),
            timestamp=_timestamp(raw.get("timestamp")),
            input_rows=_count(raw.get("numInputRows")),
            input_rows_per_second=_rate(raw.get("inputRowsPerSecond")),
            processed_rows_per_second=_rate(raw.get("processedRowsPerSecond")),
            durations_ms={phase: int(ms) for phase, ms in durations.items() if ms is not None},
            watermark=_watermark((raw.get("eventTime") or {}).get("watermark")),
            late_rows=sum(_count(op.get("numRowsDroppedByWatermark")) for op in operators),
            state_rows=sum(_count(op.get("numRowsTotal")) for op in operators),
            state_rows_updated=sum(_count(op.get("numRowsUpdated")) for op in operators),
            rows_written=None if written is None or int(written) < 0 else int(written),
            sources=tuple(
                SourceProgress.from_progress(source) for source in raw.get("sources") or []
                if isinstance(source, Mapping)
            ),
            expectations=ExpectationCounts.from_metrics((raw.get("observedMetrics") or {}).get(OBSERVATION)),
            unreadable_lines=_unreadable_lines(raw.get("observedMetrics") or {}),
            raw=raw,
        )

    @property
    def ran_a_batch(self) -> bool:
        return self.batch_id is not None and "addBatch" in self.durations_ms

    @property
    def duration_ms(self) -> Optional[int]:
        """The whole trigger's time (`triggerExecution`)."""
        return self.durations_ms.get("triggerExecution")

    @property
    def model(self) -> str:
        """The model a query writes: its name's last part (queries are named after the table)."""
        return model_of(self.query_name)

    @property
    def label(self) -> str:
        """What to call the query on the terminal."""
        return self.query_name or self.query_id or "?"


def model_of(query_name: str) -> str:
    return query_name.replace("`", "").split(".")[-1]


def iso(moment: Optional[datetime]) -> Optional[str]:
    """A time as Spark writes it in progress: '2026-11-22T10:00:00.123Z'."""
    if moment is None:
        return None
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def batches_of(query: Any) -> list[BatchProgress]:
    """The query's recent progress (`recentProgress`), only the triggers that ran a batch."""
    read = (BatchProgress.from_progress(progress) for progress in query.recentProgress or [])
    return [batch for batch in read if batch.ran_a_batch]


def last_batch(query: Any) -> Optional[BatchProgress]:
    """The query's latest batch that ran (its lastProgress may be an idle trigger's)."""
    for progress in reversed(query.recentProgress or []):
        batch = BatchProgress.from_progress(progress)
        if batch.ran_a_batch:
            return batch
    return None


def _as_json_dict(progress: Any) -> dict:
    if isinstance(progress, (str, bytes)):
        return json.loads(progress)
    as_json = getattr(progress, "json", None)  # pyspark's StreamingQueryProgress (a dict whose
    if type(progress) is not dict and isinstance(as_json, str):  # .get gives UUIDs and objects)
        return json.loads(as_json)
    if isinstance(progress, Mapping):
        return dict(progress)
    raise TypeError(f"not a streaming query progress: {type(progress).__name__}")


def _text(value: Any) -> Optional[str]:
    return None if value is None else str(value)


def _count(value: Any) -> int:
    if value is None:
        return 0
    number = float(value)
    return int(number) if math.isfinite(number) else 0


def _rate(value: Any) -> Optional[float]:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None  # NaN: no time elapsed


def _timestamp(text: Any) -> Optional[datetime]:
    """Spark's progress times are UTC ISO-8601 ('2026-11-22T10:00:00.123Z'); kept time-zone aware
    so that the Python process's own zone plays no part."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _watermark(text: Any) -> Optional[datetime]:
    moment = _timestamp(text)
    return None if moment is None or moment == NO_WATERMARK else moment


def _unreadable_lines(observed: Mapping[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for name, metrics in observed.items():
        if str(name).startswith(UNREADABLE_OBSERVATION_PREFIX) and isinstance(metrics, Mapping):
            for column, rows in metrics.items():
                counts[column] = counts.get(column, 0) + _count(rows)
    return counts
