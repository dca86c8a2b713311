"""Backfills: historical data appended once to an append-mode streaming table, by the model's SQL.

Each backfill (config in runtime/config/backfills.py) runs the model's compiled SQL as a batch query
with its one streaming input (a `source()` stream view or a `stream(<table>)`) replaced by a
view over the historical data, conformed to the input's schema: the history gets the same
columns, cleaning, dedupe, contract and expectations as streamed rows. The rows are appended
under a Delta transaction (txnAppId `backfill:<name>`, txnVersion 1 + the table's generation:
how often a full refresh emptied it in place), which Delta keeps in the
table's state (its log checkpoints too, with no expiry unless `delta.setTransactionRetentionDuration`
is set): a later run finds it there and skips the backfill, and a second write of it, should one
ever race, is skipped by Delta itself. The model's streaming checkpoint is neither read nor
written; its query does not see the historical data, and the historical data is not deduplicated
against what the stream wrote.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Optional

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType

from python_runners.runtime.delta import constraints as delta_constraints

from python_runners.runtime.delta import tables as delta_tables

from python_runners.runtime.delta import hadoop_fs
from python_runners.runtime.config.backfills import Backfill
from python_runners.runtime.errors import StreamingModelError, explain
from python_runners.runtime.config.expectations import ExpectationCounts, expectations_said
from python_runners.runtime.lakehouse import Lakehouse
from python_runners.runtime.config.model import ModelConfig
from python_runners.runtime.session import claim_lakehouse_for
from python_runners.runtime.config.stream_reads import STREAM_READ
from python_runners.runtime.sources.views import (
    StreamSource, _json_with_rescued_data, source_view_name,
)
from python_runners.runtime.writes.expectation_checks import (
    check_rules, checked, kept_rows, quarantined_rows,
)

TXN_VERSION = 1
METADATA = "_metadata"
# A model's streaming inputs in its compiled SQL: stream(<table>) (with its options, as
# stream_changes renders it) and the source views of meta.stream sources.
_STREAM_INPUT = re.compile(
    STREAM_READ.pattern + r"|(?<![\w$])(?P<view>stream_source__\w+)(?![\w$])", re.I
)
_STREAM_ONLY_OPTIONS = ("maxFilesPerTrigger", "maxBytesPerTrigger", "cleanSource", "sourceArchiveDir")


@dataclass(frozen=True)
class BackfillOutcome:
    name: str
    rows: int = 0
    applied_before: bool = False
    expectations: ExpectationCounts = ExpectationCounts()

    def said(self) -> str:
        if self.applied_before:
            return f"backfill {self.name}: already applied"
        rows = "1 row" if self.rows == 1 else f"{self.rows} rows"
        return f"backfill {self.name}: {rows} appended{expectations_said(self.expectations)}"


def backfills_said(outcomes: list[BackfillOutcome]) -> str:
    """What the run output adds after the stream's summary, '' without backfills."""
    return "".join(f"; {outcome.said()}" for outcome in outcomes)


def run_backfills(
    spark: SparkSession, config: ModelConfig, sql: str, target_table: str,
    lakehouse: Optional[Lakehouse] = None,
) -> list[BackfillOutcome]:
    """Each of the model's backfills appended to its (existing) table once; the ones applied
    before are skipped without reading their data."""
    if not config.backfills:
        return []
    lakehouse = lakehouse or Lakehouse.from_env()
    location = delta_tables.location(spark, target_table)
    return [
        _run_backfill(spark, config, backfill, sql, target_table, location, lakehouse)
        for backfill in config.backfills
    ]


def _run_backfill(
    spark: SparkSession, config: ModelConfig, backfill: Backfill, sql: str, target_table: str,
    location: str, lakehouse: Lakehouse,
) -> BackfillOutcome:
    where = f"Model {config.model}: backfill {backfill.name}"
    txn_version, applied = _transaction(spark, location, backfill.app_id)
    if applied:
        return BackfillOutcome(backfill.name, applied_before=True)
    match = _the_streaming_input(where, sql)
    counts = ExpectationCounts()
    kept = None
    try:
        input_name, input_schema, source = _input(spark, config, match)
        history = historical_frame(spark, where, backfill, input_name, input_schema, source, lakehouse)
        view = f"{config.model}__backfill_{backfill.name}"
        history.createOrReplaceTempView(view)
        frame = spark.sql(sql[:match.start()] + view + sql[match.end():])
        if config.dedupe is not None:
            frame = config.dedupe.apply(frame)  # a batch: duplicates within the history dropped
        delta_constraints.check_query(spark, config.contract, frame.schema)
        claim_lakehouse_for(config.model)
        if config.expectations:
            check_rules(frame, config.expectations)
            observation = Observation(f"backfill_{backfill.name}")
            kept = checked(frame, config.expectations, observation).persist()
            kept.count()  # the query and its rules, once (a fail rule raises here)
            counts = ExpectationCounts.from_metrics(observation.get)
            quarantine = config.expectations.quarantine_table(target_table)
            if quarantine is not None:
                rows = quarantined_rows(kept)
                delta_tables.create_if_missing(spark, quarantine, rows.schema)
                _append(rows, quarantine, backfill, txn_version, merge_schema=True)
            frame = kept_rows(kept)
        before = delta_tables.log_folder_and_version(spark, location)[1]
        _append(frame, target_table, backfill, txn_version, merge_schema=config.append_new_columns)
    except (PySparkException, Py4JJavaError) as error:
        raise explain(config.model, error) from None
    finally:
        if kept is not None:
            kept.unpersist()
    return BackfillOutcome(backfill.name, rows=_rows_appended(spark, location, before, backfill), expectations=counts)


def _transaction(spark: SparkSession, location: str, app_id: str) -> tuple[int, bool]:
    """The Delta transaction version a backfill writes under in the table at `location`, and
    whether the table records it already: from its current state, read once (no data read).
    Once per generation of the table: emptied in place by a full refresh, it gets them again."""
    jvm = spark._jvm
    log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, location)
    latest = log.update(False, jvm.scala.Option.empty(), jvm.scala.Option.empty())
    generation = latest.metadata().configuration().get(delta_tables.GENERATION)
    txn_version = TXN_VERSION + (int(generation.get()) if generation.isDefined() else 0)
    found = latest.transactions().get(app_id)
    return txn_version, found.isDefined() and int(found.get()) >= txn_version


def _the_streaming_input(where: str, sql: str) -> re.Match:
    matches = list(_STREAM_INPUT.finditer(sql))
    named = list(dict.fromkeys(_input_text(match) for match in matches))
    if len(named) != 1:
        raise StreamingModelError(
            f"{where}: a backfill runs the model's SQL with its streaming input replaced by the "
            f"historical data, so the model must read exactly one stream; it reads "
            f"{', '.join(named) or 'none'}. Backfill the upstream model that reads the stream "
            "instead, or split the model."
        )
    if len(matches) > 1:  # one stream named twice (a self-join): each mention is the history
        raise StreamingModelError(
            f"{where}: the model reads its stream {named[0]} more than once; a backfill replaces "
            "one streaming input. Read it once (a CTE) and refer to the CTE."
        )
    return matches[0]


def _input_text(match: re.Match) -> str:
    return (match["view"] or f"stream({match['table']})").lower()


def _input(
    spark: SparkSession, config: ModelConfig, match: re.Match
) -> tuple[str, StructType, Optional[StreamSource]]:
    """The replaced input's name, schema (as the model's SQL sees it) and source, if a file one."""
    if match["table"]:
        table = match["table"].strip()
        return table, spark.table(table).schema, None
    view = match["view"]
    source = next(
        (read.source for read in config.sources if source_view_name(read.name).lower() == view.lower()), None
    )
    return (source.name if source else view), spark.table(view).schema, source


def historical_frame(
    spark: SparkSession, where: str, backfill: Backfill, input_name: str, input_schema: StructType,
    source: Optional[StreamSource], lakehouse: Lakehouse,
) -> DataFrame:
    """The historical data with exactly the columns and types of the input it replaces; a
    mismatch or a missing path is an error naming the columns."""
    added = {METADATA}  # columns the reader adds: file metadata, unreadable lines, rescued fields
    corrupt = rescued = None
    if source is not None:
        corrupt, rescued = source.corrupt_record_column, source.rescued_data_column
        added |= {column for column in (corrupt, rescued) if column}
    data = StructType([f for f in input_schema.fields if f.name not in added])
    if backfill.table:
        if not spark.catalog.tableExists(backfill.table):
            raise StreamingModelError(f"{where}: table {backfill.table} does not exist. {_FIX_PLACE}")
        frame = _with_metadata(spark.read.options(**backfill.options).table(backfill.table))
        _check_columns(where, input_name, data, frame.schema, types=True)
        return _conformed(frame, input_schema)
    path = lakehouse.landing_path(backfill.path)
    if not hadoop_fs.exists(spark, path):
        raise StreamingModelError(
            f"{where}: its path {path} (backfills.path: {backfill.path}) does not exist. {_FIX_PLACE}"
        )
    inherited = source.options if source is not None and source.format == backfill.format else {}
    options = {k: v for k, v in {**inherited, **backfill.options}.items() if k not in _STREAM_ONLY_OPTIONS}
    if backfill.format in ("parquet", "delta"):
        frame = _with_metadata(spark.read.format(backfill.format).options(**options).load(path))
        _check_columns(where, input_name, data, frame.schema, types=True)
        return _conformed(frame, input_schema)
    # json, csv: the names the files have, then a read with the stream's own types (a value that
    # does not fit lands in the corrupt-record column, as it would from the stream).
    found = spark.read.format(backfill.format).options(**options).load(path).schema
    found = StructType([f for f in found.fields if f.name != (corrupt or "_corrupt_record")])
    if backfill.format == "csv" and options.get("header") != "true":
        if len(found.fields) != len(data.fields):
            raise StreamingModelError(
                f"{where}: its csv files have {len(found.fields)} columns, the streaming input it "
                f"replaces ({input_name}) has {len(data.fields)} ({', '.join(data.fieldNames())}); "
                "without a header the columns are read by position. Make them match."
            )
    else:
        _check_columns(where, input_name, data, found, types=False, extra_allowed=bool(rescued))
    read_schema = StructType(data.fields + ([StructField(corrupt, input_schema[corrupt].dataType)] if corrupt else []))
    if corrupt:
        options["columnNameOfCorruptRecord"] = corrupt
    if rescued:
        lines = spark.read.format("text").options(**options).load(path)
        frame = _json_with_rescued_data(lines, rescued, read_schema, options)
    else:
        frame = spark.read.format(backfill.format).options(**options).schema(read_schema).load(path)
        frame = frame.select("*", METADATA)
    return _conformed(frame, input_schema)


_FIX_PLACE = "Correct the backfill's path (or table), or remove the backfill."


def _with_metadata(frame: DataFrame) -> DataFrame:
    """With the files' `_metadata` column where the reader has one (file and Delta reads)."""
    try:
        return frame.select("*", METADATA)
    except (PySparkException, Py4JJavaError):
        return frame


def _check_columns(
    where: str, input_name: str, wanted: StructType, found: StructType, types: bool,
    extra_allowed: bool = False,
) -> None:
    have = {f.name.lower(): f for f in found.fields if f.name != METADATA}
    want = {f.name.lower(): f for f in wanted.fields}
    missing = [f"{f.name} {f.dataType.simpleString()}" for key, f in want.items() if key not in have]
    extra = [] if extra_allowed else [f.name for key, f in have.items() if key not in want]
    other = [
        f"{f.name} ({have[key].dataType.simpleString()} in the history, {f.dataType.simpleString()} in the stream)"
        for key, f in want.items()
        if types and key in have and have[key].dataType.simpleString() != f.dataType.simpleString()
    ]
    if missing or extra or other:
        said = [f"missing: {', '.join(missing)}" if missing else "",
                f"not in the stream: {', '.join(extra)}" if extra else "",
                f"other types: {', '.join(other)}" if other else ""]
        raise StreamingModelError(
            f"{where}: the historical data does not have the schema of the streaming input it "
            f"replaces ({input_name}); {'; '.join(s for s in said if s)}. The backfill runs the "
            "model's SQL on it as if it were the stream: make its columns match (e.g. a Delta "
            "table of the history selected and cast to the stream's columns)."
        )


def _conformed(frame: DataFrame, schema: StructType) -> DataFrame:
    """The frame with exactly `schema`'s columns, in its order: reader-added columns the history
    lacks are null, `_metadata` keeps the fields both have."""
    have = {name.lower(): name for name in frame.columns}
    columns = []
    for wanted in schema.fields:
        actual = have.get(wanted.name.lower())
        if actual is None:
            columns.append(F.lit(None).cast(wanted.dataType).alias(wanted.name))
        elif wanted.name == METADATA and isinstance(wanted.dataType, StructType):
            columns.append(_metadata_like(frame.schema[actual].dataType, wanted.dataType))
        else:
            columns.append(F.col(f"`{actual}`").cast(wanted.dataType).alias(wanted.name))
    return frame.select(*columns)


def _metadata_like(found, wanted: StructType) -> Column:
    names = set(found.fieldNames()) if isinstance(found, StructType) else set()
    return F.struct(*(
        (F.col(f"{METADATA}.`{field.name}`").cast(field.dataType) if field.name in names
         else F.lit(None).cast(field.dataType)).alias(field.name)
        for field in wanted.fields
    )).alias(METADATA)


def _marker(backfill: Backfill) -> str:
    return json.dumps({"backfill": backfill.name})


def _append(frame: DataFrame, table: str, backfill: Backfill, txn_version: int, merge_schema: bool) -> None:
    """The backfill's rows into `table` in one commit under its Delta transaction (Delta keeps
    a table's transactions apart, so the quarantine and the table take the same id)."""
    writer = (
        frame.write.format("delta").mode("append")
        .option("txnAppId", backfill.app_id).option("txnVersion", txn_version)
        .option("userMetadata", _marker(backfill))
    )
    if merge_schema:
        writer = writer.option("mergeSchema", "true")
    writer.saveAsTable(table)


def _rows_appended(spark: SparkSession, location: str, version: int, backfill: Backfill) -> int:
    """Rows of the backfill's commit after `version` (0 when Delta skipped it as applied)."""
    log = spark._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, location)
    return sum(int(commit.get("operationMetrics", {}).get("numOutputRows", 0))
               for commit in delta_tables.commit_infos_since(spark, log, version)
               if commit.get("userMetadata") == _marker(backfill))
