"""Reset a model's checkpoint and keep its table: the next run reads its inputs from a chosen point.

For a checkpoint that was lost or corrupted, or an input that was replaced. The reset deletes
the model's checkpoint and writes what it decided into the empty folder (`_reset.json`):

- `now`: only input that arrives after the reset. For a Delta input (an upstream model read
  with stream(ref(...)), or a Delta source) the version it had at the reset is recorded, and the
  next run starts at the version after it; for Kafka and file sources the reset's time is.
- `version`: a Delta input's first version to read (Delta's startingVersion, inclusive).
- `timestamp`: for Delta inputs the first commit at or after it (startingTimestamp), for Kafka the
  first record at or after it (startingTimestamp), for file sources the files modified at or
  after it (`_metadata.file_modification_time`; Spark's modifiedAfter is for batch reads only).
- `offsets`: a Kafka source's startingOffsets, as Spark's JSON.

While the checkpoint has not planned a batch, each run of the model applies the record: its own
reads of its inputs get the starting options (a per-model view for sources, `with (...)` options
on its stream() reads), so other models reading the same source are untouched; and the table's
rows without a checkpoint are expected (checkpoints.check_matches_table). Once the stream has
progress the checkpoint is where to start and the record is moved aside (`_reset.applied.json`).
A full refresh deletes the checkpoint with the record: it starts over from the beginning.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Mapping, Optional, Sequence

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from python_runners.runtime.lifecycle import checkpoints

from python_runners.runtime.delta import hadoop_fs
from python_runners.runtime.errors import ConfigError, StreamingModelError, root_cause
from python_runners.runtime.config.stream_reads import STREAM_READ

RECORD = "_reset.json"
APPLIED = "_reset.applied.json"
KINDS = ("now", "version", "timestamp", "offsets")
# The --args of `dbt run-operation reset_checkpoint` (and the command line's --from-* options).
ARGUMENTS = {"from_now": "now", "from_version": "version", "from_timestamp": "timestamp",
             "from_offsets": "offsets"}
RESETTABLE_MATERIALIZATIONS = ("streaming_table", "cdc_table")
_FILE_FORMATS = ("json", "csv", "parquet")
_TIME_FORMATS = ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%d")


class CheckpointResetError(ConfigError):
    pass


@dataclass(frozen=True)
class StartingPoint:
    kind: str  # one of KINDS
    version: Optional[int] = None
    timestamp_ms: Optional[int] = None  # for `timestamp`, and the reset's own time for `now`
    offsets: Optional[str] = None  # Kafka startingOffsets JSON

    @classmethod
    def from_args(cls, model: str, args: Mapping[str, Any], now_ms: Optional[int] = None) -> "StartingPoint":
        """Exactly one of from_now, from_version, from_timestamp, from_offsets."""
        given = {key: value for key, value in args.items()
                 if key in ARGUMENTS and value not in (None, False, "")}
        if len(given) != 1:
            said = ", ".join(sorted(given)) or "none"
            raise CheckpointResetError(
                f"Model {model}: say where the next run starts reading, with exactly one of "
                f"{', '.join(ARGUMENTS)} (given: {said}). from_now: only input arriving after "
                "the reset; from_version: N (Delta inputs); from_timestamp: '2026-01-31 12:00:00' "
                "(UTC); from_offsets: a Kafka startingOffsets JSON."
            )
        (key, value), = given.items()
        kind = ARGUMENTS[key]
        now_ms = now_ms if now_ms is not None else _now_ms()
        if kind == "now":
            if value is not True and str(value).lower() != "true":
                raise CheckpointResetError(f"Model {model}: from_now is {value!r}; give true.")
            return cls("now", timestamp_ms=now_ms)
        if kind == "version":
            if isinstance(value, bool) or not str(value).isdigit():
                raise CheckpointResetError(
                    f"Model {model}: from_version is {value!r}; give a Delta version, a whole "
                    "number from 0 (the first version the next run reads, as Delta's startingVersion)."
                )
            return cls("version", version=int(value))
        if kind == "timestamp":
            moment = parse_timestamp(model, str(value))
            if moment > now_ms:
                raise CheckpointResetError(
                    f"Model {model}: from_timestamp {value} is in the future; give a time already "
                    "past, or from_now to read only what arrives from now on."
                )
            return cls("timestamp", timestamp_ms=moment)
        offsets = value if isinstance(value, str) else json.dumps(value)
        try:
            parsed = json.loads(offsets)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict) or not parsed:
            raise CheckpointResetError(
                f"Model {model}: from_offsets is {value!r}; give Kafka offsets per topic and "
                'partition as JSON, e.g. {"readings": {"0": 1200, "1": 1180}} (-2 earliest, -1 latest).'
            )
        return cls("offsets", offsets=json.dumps(parsed, sort_keys=True))

    def describe(self) -> str:
        if self.kind == "now":
            return f"now ({_iso(self.timestamp_ms)})"
        if self.kind == "version":
            return f"version {self.version}"
        if self.kind == "timestamp":
            return f"timestamp {_iso(self.timestamp_ms)}"
        return f"offsets {self.offsets}"

    def as_json(self) -> dict:
        return {key: value for key, value in self.__dict__.items() if value is not None}


@dataclass(frozen=True)
class Input:
    """One streaming input of the model: a Delta table (`table`), or a meta.stream source."""

    name: str  # ref name, or "<source>.<table>"
    kind: str  # "delta_table", "delta_path", "kafka", or a file format
    table: Optional[str] = None  # delta_table: schema.table, as the compiled SQL names it
    path: Optional[str] = None  # delta_path
    latest_version: Optional[int] = None  # Delta inputs: at the reset

    @property
    def is_delta(self) -> bool:
        return self.kind in ("delta_table", "delta_path")


@dataclass(frozen=True)
class Reset:
    model: str
    point: StartingPoint
    inputs: tuple[Input, ...] = ()
    reset_at_ms: int = field(default_factory=lambda: _now_ms())

    def to_json(self) -> str:
        return json.dumps({
            "model": self.model, "reset_at": _iso(self.reset_at_ms), "reset_at_ms": self.reset_at_ms,
            "from": self.point.as_json(),
            "inputs": [{k: v for k, v in i.__dict__.items() if v is not None} for i in self.inputs],
        }, indent=2)

    @classmethod
    def from_json(cls, text: str) -> "Reset":
        data = json.loads(text)
        return cls(
            model=data["model"], point=StartingPoint(**data["from"]),
            inputs=tuple(Input(**i) for i in data.get("inputs", ())), reset_at_ms=data["reset_at_ms"],
        )

    def input_of_table(self, table: str) -> Optional[Input]:
        for read in self.inputs:
            if read.kind == "delta_table" and normal_table(read.table or "") == normal_table(table):
                return read
        return None

    def input_named(self, name: str) -> Optional[Input]:
        return next((read for read in self.inputs if read.name == name and read.kind != "delta_table"), None)


# ---------------------------------------------------------------------------------------------
# The reset (dbt run-operation reset_checkpoint)


# stream(ref('m')), stream_changes(ref('m')), stream_appends(ref('m')): the refs a model streams.
_STREAMED_REF = re.compile(
    r"\bstream(?:_changes|_appends)?\s*\(\s*(?:\{\{\s*)?ref\s*\(\s*(?:['\"][^'\"]+['\"]\s*,\s*)?"
    r"['\"]([^'\"]+)['\"]", re.I)
_STREAMED_SOURCE = re.compile(
    r"\bstream(?:_changes|_appends)?\s*\(\s*(?:\{\{\s*)?source\s*\(\s*['\"]([^'\"]+)['\"]\s*,\s*"
    r"['\"]([^'\"]+)['\"]", re.I)


def streaming_inputs(node: Mapping[str, Any], graph: Mapping[str, Any], config: Any) -> list[Input]:
    """The model's streaming inputs, from its SQL as written and dbt's graph (no Spark)."""
    raw = node.get("raw_code") or ""
    inputs: list[Input] = []
    streamed_refs = set(_STREAMED_REF.findall(raw))
    for unique_id in (node.get("depends_on") or {}).get("nodes", ()):
        upstream = (graph.get("nodes") or {}).get(unique_id)
        if upstream and upstream["name"] in streamed_refs:
            inputs.append(Input(name=upstream["name"], kind="delta_table", table=_relation(upstream)))
    streamed_sources = set(_STREAMED_SOURCE.findall(raw))
    for source in (graph.get("sources") or {}).values():
        if (source["source_name"], source["name"]) in streamed_sources:
            inputs.append(Input(name=f"{source['source_name']}.{source['name']}", kind="delta_table",
                                table=_relation(source)))
    for read in config.sources:
        if read.source.format == "delta":
            inputs.append(Input(name=read.name, kind="delta_path", path=read.source.path))
        else:
            inputs.append(Input(name=read.name, kind=read.source.format))
    return inputs


def _relation(node: Mapping[str, Any]) -> str:
    return f"{node['schema']}.{node.get('alias') or node.get('identifier') or node['name']}"


def reset_checkpoint(
    spark: SparkSession, config: Any, table: str, inputs: Sequence[Input], point: StartingPoint,
    landing_path=lambda path: path,
) -> Reset:
    """Check the starting point against the model's inputs, then delete the checkpoint and record
    the starting point in its folder. `landing_path` resolves a Delta source's path."""
    model = config.model
    if config.materialized not in RESETTABLE_MATERIALIZATIONS:
        raise CheckpointResetError(
            f"Model {model}: materialized {config.materialized!r} has no streaming checkpoint to "
            "reset (a copy_into model keeps a load log: reload files with force=true). Reset "
            f"applies to {', '.join(RESETTABLE_MATERIALIZATIONS)} models."
        )
    if config.changes is None and config.output_mode != "append":
        raise CheckpointResetError(
            f"Model {model}: output_mode {config.output_mode!r} writes aggregates of all the input "
            "read since the checkpoint began; after a reset the next batch would replace (complete) "
            "or overwrite by key (update) the table's rows with aggregates of the new input only. "
            f"Rebuild it from all input instead: `dbt run --full-refresh --select {model}`."
        )
    if not inputs:
        raise CheckpointResetError(
            f"Model {model}: no streaming input found in its SQL (stream(ref(...)), "
            "stream(source(...)) or a source with meta.stream), so there is no starting point to "
            f"set. Rebuild it instead: `dbt run --full-refresh --select {model}`."
        )
    resolved = tuple(_with_latest_version(spark, read, landing_path) for read in inputs)
    _check_point_fits(model, point, resolved)
    reset = Reset(model=model, point=point, inputs=resolved)
    checkpoints.delete(spark, config.checkpoint)
    hadoop_fs.write_text(spark, _record_path(config.checkpoint), reset.to_json())
    return reset


def _with_latest_version(spark: SparkSession, read: Input, landing_path) -> Input:
    if not read.is_delta:
        return read
    version = _latest_version(spark, read, landing_path)
    return replace(read, latest_version=version, path=landing_path(read.path) if read.path else None)


def _latest_version(spark: SparkSession, read: Input, landing_path) -> int:
    from python_runners.runtime.delta import tables as delta_tables
    if read.kind == "delta_table":
        snapshot = delta_tables.snapshot(spark, read.table)
        return snapshot.version if snapshot.exists else -1
    location = landing_path(read.path)
    if not hadoop_fs.exists(spark, location.rstrip("/") + "/_delta_log"):
        return -1
    return delta_tables.log_folder_and_version(spark, location)[1]


def _check_point_fits(model: str, point: StartingPoint, inputs: Sequence[Input]) -> None:
    names = ", ".join(f"{read.name} ({_kind_said(read)})" for read in inputs)
    if point.kind == "version":
        if len(inputs) != 1 or not inputs[0].is_delta:
            raise CheckpointResetError(
                f"Model {model}: from_version sets where one Delta input starts; this model "
                f"streams from {names}. Use from_timestamp (every input from one time) or from_now."
            )
        read = inputs[0]
        if read.latest_version is None or read.latest_version < 0:
            raise CheckpointResetError(
                f"Model {model}: its input {read.name} has no Delta table yet, so it has no version "
                f"{point.version}. Run the upstream first, or use from_now."
            )
        if point.version > read.latest_version:
            raise CheckpointResetError(
                f"Model {model}: from_version {point.version} is beyond the latest version "
                f"({read.latest_version}) of its input {read.name}. Give a version from 0 to "
                f"{read.latest_version} (the first one the next run reads), or from_now to read "
                f"only commits after version {read.latest_version}."
            )
    if point.kind == "offsets" and any(read.kind != "kafka" for read in inputs):
        raise CheckpointResetError(
            f"Model {model}: from_offsets sets Kafka offsets; this model streams from {names}. "
            "Use from_timestamp or from_now for other inputs (from_version for one Delta input)."
        )


def _kind_said(read: Input) -> str:
    return {"delta_table": "Delta table", "delta_path": "Delta source", "kafka": "Kafka"}.get(
        read.kind, f"{read.kind} files")


# ---------------------------------------------------------------------------------------------
# The next runs of the model


def pending(spark: SparkSession, checkpoint: str) -> Optional[Reset]:
    """The reset recorded in the checkpoint while the stream has not planned a batch; once it
    has, the record is moved aside (the checkpoint now says where the stream is)."""
    record = _record_path(checkpoint)
    if not hadoop_fs.exists(spark, record):
        return None
    text = hadoop_fs.read_text(spark, record)
    if checkpoints.has_progress(spark, checkpoint):
        hadoop_fs.write_text(spark, checkpoint.rstrip("/") + "/" + APPLIED, text)
        hadoop_fs.delete(spark, record)
        return None
    return Reset.from_json(text)


def waiting_for_input(spark: SparkSession, checkpoint: str, error: BaseException) -> bool:
    """A stream starting from a pending reset failed only because its first Delta version after
    the reset does not exist yet: nothing new since the reset, which stays pending."""
    return "DELTA_VERSION_NOT_FOUND" in root_cause(error) and pending(spark, checkpoint) is not None


def apply_to_query(
    spark: SparkSession, config: Any, sql: str, source_views: Any, lakehouse: Any,
) -> str:
    """The model's SQL reading from its pending reset's starting point (the SQL as it is when no
    reset is pending): its stream() reads get Delta options, its meta.stream sources a view of
    this model's own."""
    reset = pending(spark, config.checkpoint)
    if reset is None:
        return sql
    sql = STREAM_READ.sub(lambda match: _stream_read_from(spark, reset, match), sql)
    for view in source_views.named_in(sql):
        sql = _read_source_view_from(spark, reset, config, view, sql, lakehouse)
    return sql


def normal_table(name: str) -> str:
    name = name.replace("`", "").lower()
    return name[len("spark_catalog."):] if name.startswith("spark_catalog.") else name


def _stream_read_from(spark: SparkSession, reset: Reset, match: re.Match) -> str:
    table = match["table"]
    read = reset.input_of_table(table)
    if read is None:
        raise StreamingModelError(
            f"Model {reset.model}: its checkpoint was reset (from {reset.point.describe()}) when it "
            f"did not stream from {normal_table(table)}; the reset has no starting point for it. "
            f"Reset again: `python -m python_runners reset-checkpoint --select {reset.model} ...`."
        )
    options = _delta_options(spark, reset, read)
    said = ", ".join(f"'{key}' = '{value}'" for key, value in options.items())
    existing = (match["options"] or "").strip()
    return f"stream({table}) with ({existing + ', ' if existing else ''}{said})"


def _delta_options(spark: SparkSession, reset: Reset, read: Input) -> dict[str, str]:
    """Delta's starting option for the input, worked out now."""
    from python_runners.runtime.delta import tables as delta_tables
    point = reset.point
    if point.kind == "version":
        return {"startingVersion": str(point.version)}
    if read.kind == "delta_table":
        snapshot = delta_tables.snapshot(spark, read.table)
        latest, log = snapshot.version, snapshot.log
    else:
        log = spark._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, read.path)
        latest = int(delta_tables._latest(spark, log).version())
    # Never 'latest': Delta works that out when the query starts, and a commit landing between
    # this call and then would be skipped. A version that does not exist yet fails the start
    # with DELTA_VERSION_NOT_FOUND instead, which the run reports as nothing new since the reset
    # (writes/streaming.py), the reset still pending.
    if point.kind == "now":
        after = read.latest_version if read.latest_version is not None else -1
        return {"startingVersion": str(after + 1)}
    last_commit_ms = int(delta_tables._latest(spark, log).timestamp()) if latest >= 0 else -1
    if point.timestamp_ms > last_commit_ms:
        return {"startingVersion": str(latest + 1)}
    # Delta reads the time in the session's time zone.
    return {"startingTimestamp": _in_zone(point.timestamp_ms, spark.conf.get("spark.sql.session.timeZone"))}


def _read_source_view_from(
    spark: SparkSession, reset: Reset, config: Any, view: str, sql: str, lakehouse: Any
) -> str:
    from python_runners.runtime.sources.views import source_frame, source_view_name

    read = next((r for r in config.sources if source_view_name(r.name) == view), None)
    if read is None:  # a batch view of a source: not streamed, nothing to start
        return sql
    recorded = reset.input_named(read.name)
    if recorded is None:
        raise StreamingModelError(
            f"Model {reset.model}: its checkpoint was reset (from {reset.point.describe()}) when it "
            f"did not read source {read.name}; the reset has no starting point for it. Reset "
            f"again: `python -m python_runners reset-checkpoint --select {reset.model} ...`."
        )
    source = read.source
    point = reset.point
    if source.format == "kafka":
        options = {k: v for k, v in source.options.items()
                   if k not in ("startingOffsets", "startingTimestamp", "startingOffsetsByTimestamp")}
        if point.kind == "offsets":
            options["startingOffsets"] = point.offsets
        else:
            options.update(startingTimestamp=str(point.timestamp_ms),
                           startingOffsetsByTimestampStrategy="latest")
        frame = source_frame(spark, replace(source, options=options), lakehouse)
    elif source.format == "delta":
        recorded = replace(recorded, path=lakehouse.landing_path(source.path))
        options = {**source.options, **_delta_options(spark, reset, recorded)}
        frame = source_frame(spark, replace(source, options=options), lakehouse)
    else:
        frame = source_frame(spark, source, lakehouse).where(
            F.col("_metadata.file_modification_time") >= F.timestamp_millis(F.lit(point.timestamp_ms))
        )
    own = f"{view}__from_reset__{re.sub(r'[^0-9a-zA-Z_]', '_', reset.model)}"
    frame.createOrReplaceTempView(own)
    return re.sub(r"(?<![\w$])" + re.escape(view) + r"(?![\w$])", own, sql, flags=re.I)


# ---------------------------------------------------------------------------------------------


def parse_timestamp(model: str, text: str) -> int:
    """Milliseconds since the epoch; a time without a zone is UTC."""
    value = text.strip()
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        moment = None
        for pattern in _TIME_FORMATS:
            try:
                moment = datetime.strptime(value, pattern)
                break
            except ValueError:
                continue
    if moment is None:
        raise CheckpointResetError(
            f"Model {model}: from_timestamp {text!r} is not a time; give one as "
            "'2026-01-31 12:00:00' (UTC) or ISO 8601 with a zone, '2026-01-31T12:00:00+01:00'."
        )
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


def _in_zone(ms: int, zone: str) -> str:
    from zoneinfo import ZoneInfo

    moment = datetime.fromtimestamp(ms / 1000, ZoneInfo(zone))
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}"


def _record_path(checkpoint: str) -> str:
    return checkpoint.rstrip("/") + "/" + RECORD


def _now_ms() -> int:
    return int(datetime.now(timezone.utc).timestamp() * 1000)


def _iso(ms: Optional[int], sep: str = "T") -> str:
    moment = datetime.fromtimestamp(ms / 1000, timezone.utc)
    return moment.isoformat(sep=sep, timespec="milliseconds").replace("+00:00", "" if sep == " " else "Z")


def reset_model_checkpoint(
    spark: SparkSession, node: Mapping[str, Any], graph: Mapping[str, Any],
    run_vars: Mapping[str, Any], arguments: Mapping[str, Any], table: str, lakehouse: Any,
) -> str:
    """The reset `dbt run-operation reset_checkpoint` asks for; what was done, to print."""
    from python_runners.runtime.config.model import read_model_config
    from python_runners.runtime.session import claim_lakehouse_for

    config = read_model_config(node, graph, run_vars)
    point = StartingPoint.from_args(config.model, arguments)
    inputs = streaming_inputs(node, graph, config)
    claim_lakehouse_for(config.model)  # no dbt run or service is writing with this checkpoint
    reset = reset_checkpoint(spark, config, table, inputs, point, lakehouse.landing_path)
    return said(reset, config.checkpoint, table)


def said(reset: Reset, checkpoint: str, table: str) -> str:
    reads = "; ".join(f"{read.name}: {_starts(reset.point, read)}" for read in reset.inputs)
    return (f"Model {reset.model}: checkpoint {checkpoint} reset, table {table} keeps its rows. "
            f"Its next run starts reading from {reset.point.describe()} ({reads}).")


def _starts(point: StartingPoint, read: Input) -> str:
    if point.kind == "version":
        return f"version {point.version} on"
    if point.kind == "now" and read.is_delta:
        return f"commits after version {read.latest_version}"
    if point.kind == "offsets":
        return f"offsets {point.offsets}"
    moment = _iso(point.timestamp_ms)
    if read.is_delta:
        return f"commits at or after {moment}"
    if read.kind == "kafka":
        return f"records timestamped at or after {moment}"
    return f"files modified at or after {moment}"
