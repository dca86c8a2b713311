"""dbt unit tests of streaming models (docs/testing-models.md).

dbt compiles a unit test as the model's SQL with each input replaced by a CTE of its given rows
(a fixture). For a streaming model that SQL reads `stream(<fixture>)`, which Spark cannot run as
a batch query, and its streaming sources have no table to take column types from. Two ways to
run it:

- **One batch** (plain dbt unit tests): the `stream(...)` reads become reads of the fixtures and
  the SQL runs as a batch query over all given rows, exactly as dbt runs any unit test.
- **Micro-batches** (a scenario): when the given rows carry `_batch`, each streamed input becomes
  an in-memory stream fed one batch at a time, the model's own watermarks, dedupe, expectations
  and output mode apply, and the table's rows after each batch are what is compared with the
  expected rows of that `_batch`. Late rows are dropped, windows emitted when the watermark
  passes them, duplicates dropped across batches: as the model's real query does.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional, Sequence

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql.types import IntegerType, StructField, StructType

from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.config.event_time import Watermark
from dbt_spark_streaming.progress.recorder import UNIT_TEST_QUERY_PREFIX
from dbt_spark_streaming.config.stream_reads import TABLE, replace_reads, stream_reads
from dbt_spark_streaming.jvm.checkpoint_log import OFFSET_LOG_VERSION, SOURCE_NAMING
from dbt_spark_streaming.jvm.memory_stream import MemoryFeed
from dbt_spark_streaming.config.model import read_model_config
from dbt_spark_streaming.writes.expectation_checks import checked, kept_rows, model_columns
from dbt_spark_streaming.unit_tests.model_test_inputs import (  # noqa: F401 - input_columns: the face's
    BATCH, ScenarioConfigError, fixtures_of, input_columns, input_name, input_view, refuse_inputs_not_read,
)

_BATCH_COLUMN = re.compile(r"\bas\s+`?_batch`?(?=\W|$)", re.I)


def actual_rows(
    spark: SparkSession, test: Mapping[str, Any], graph: Mapping[str, Any], sql: str,
    expected_rows: Optional[list] = None, given: Sequence[str] = (), source_views: Any = None,
) -> dict[str, Any]:
    """The rows a unit test compares with its expected rows, as a temp view: the model's SQL run
    as one batch, or a scenario's table after each batch (with `_batch`). Returns the view's name
    and its columns' types and quoted names, as dbt's unit test macros take them. `given`: the
    test's inputs as written (`ref('x')`), which dbt leaves out of the SQL when the model does not
    read them. `source_views`: the invocation's SourceViews, whose views the SQL names are
    registered first."""
    if source_views is not None:
        source_views.register_named_in(lambda: spark, sql)
    tested = (graph.get("nodes") or {}).get(test.get("tested_node_unique_id") or "") or {}
    view = f"unit_test__{test['name']}__actual"
    drop_views(spark)  # what a test that failed in dbt's macros after this step left
    refuse_inputs_not_read(test["name"], tested, given)
    try:
        if _batched(test, sql, expected_rows):
            frame = run_scenario(spark, test, tested, graph, sql, expected_rows or [])
        else:
            frame = spark.sql(_read_as_batch(sql))
        frame.createOrReplaceTempView(view)
    except Exception:
        drop_views(spark, test["name"])
        raise
    return {
        "view": view,
        "columns": {field.name.lower(): field.dataType.simpleString() for field in frame.schema},
        "quoted": {field.name.lower(): f"`{field.name}`" for field in frame.schema},
    }


def drop_views(spark: SparkSession, test_name: Optional[str] = None) -> None:
    """The temp views a unit test made (its actual rows and a scenario's inputs); every unit
    test's when no test is named."""
    for table in spark.catalog.listTables():
        mine = (table.name == f"unit_test__{test_name}__actual" or table.name.startswith(input_view(test_name, ""))
                if test_name is not None else table.name.startswith("unit_test__"))
        if table.isTemporary and mine:
            spark.catalog.dropTempView(table.name)


def _batched(test: Mapping[str, Any], sql: str, expected_rows: Optional[list]) -> bool:
    if any(BATCH in row for row in expected_rows or []):
        return True
    given = [input_name(name) for name, body in fixtures_of(sql)[0].items() if _BATCH_COLUMN.search(body)]
    if given:
        raise ScenarioConfigError(
            f"Unit test {test['name']}: the given rows of {', '.join(given)} say in which batch "
            f"they arrive (_batch), but its expected rows do not say after which batch the table "
            f"holds them. Give each expected row a _batch too (a micro-batch scenario), or remove "
            f"_batch from the given rows (one batch)."
        )
    return False


def _read_as_batch(sql: str) -> str:
    return replace_reads(sql, lambda read: read.relation if read.kind == TABLE else None)


def _reading_from(query: str, fixture: str, view: str) -> str:
    """The query reading `view` where it reads the fixture, streamed (with its options) or not."""
    query = replace_reads(query, lambda read: view if read.kind == TABLE and read.relation == fixture else None)
    return re.sub(rf"\b{fixture}\b", view, query)


def run_scenario(
    spark: SparkSession, test: Mapping[str, Any], tested: Mapping[str, Any], graph: Mapping[str, Any],
    sql: str, expected_rows: list,
) -> DataFrame:
    """The model's rows after each batch of its given rows, through Spark's streaming engine."""
    name = test["name"]
    if (tested.get("config") or {}).get("materialized") != "streaming_table":
        raise ScenarioConfigError(
            f"Unit test {name}: rows with _batch (a micro-batch scenario) are for streaming_table "
            f"models; {tested.get('name')} is a {(tested.get('config') or {}).get('materialized')}. "
            f"Remove _batch to test its SQL as one batch."
        )
    config = read_model_config(tested, graph)
    session, spark = spark, _without_source_names(spark)
    fixtures, query = fixtures_of(sql)
    streamed = _streamed_fixtures(query, fixtures, tested, graph)
    feeds, batches, watermarked = {}, _batches_of(name, "its expected rows", expected_rows), set()
    for fixture, body in fixtures.items():
        rows = spark.sql(body)
        view = input_view(name, fixture)
        if fixture in streamed:
            if BATCH not in rows.columns:
                raise ScenarioConfigError(
                    f"Unit test {name}: {config.model} streams from {input_name(fixture)}, so in "
                    f"a scenario each of its given rows needs _batch (the micro-batch it arrives in)."
                )
            feed = MemoryFeed(spark, rows.drop(BATCH).schema)
            frame = feed.frame
            for watermark in config.watermarks:
                if watermark.column in frame.columns:
                    frame = Watermark.apply(watermark, frame)
                    watermarked.add(watermark.column)
            feeds[fixture] = (feed, rows.collect())
            batches |= _batches_of(name, f"the given rows of {input_name(fixture)}", feeds[fixture][1])
        elif BATCH in rows.columns:
            raise ScenarioConfigError(
                f"Unit test {name}: {config.model} reads {input_name(fixture)} as a batch, not as "
                f"a stream, so all of its rows are there from the first batch; remove _batch from them."
            )
        else:
            frame = rows
        frame.createOrReplaceTempView(view)
        query = _reading_from(query, fixture, view)
    unused = [watermark.column for watermark in config.watermarks if watermark.column not in watermarked]
    if unused:
        raise ScenarioConfigError(
            f"Unit test {name}: {config.model}'s watermark column {', '.join(map(repr, unused))} is "
            f"not a column of any input it streams from ({', '.join(map(input_name, feeds)) or 'none'})."
        )
    frame = spark.sql(query)
    if config.dedupe is not None:
        frame = config.dedupe.apply(frame)
    frame = checked(frame, config.expectations)
    table = _ScenarioTable(config.output_mode, config.unique_key)
    stream = frame.writeStream.queryName(f"{UNIT_TEST_QUERY_PREFIX}{name}").outputMode(table.output_mode).foreachBatch(
        lambda batch, _: table.write(model_columns(kept_rows(batch)).collect())
    ).start()
    snapshots: list[Row] = []
    try:
        for batch in sorted(batches):
            for feed, rows in feeds.values():
                feed.add([row for row in rows if row[BATCH] == batch])
            stream.processAllAvailable()
            snapshots += [Row(**row.asDict(), **{BATCH: batch}) for row in table.rows]
    except Exception as error:
        raise StreamingModelError(f"Unit test {name} of model {config.model}: {error}") from None
    finally:
        stream.stop()
    columns = model_columns(frame).schema
    return session.createDataFrame(snapshots, StructType([*columns.fields, StructField(BATCH, IntegerType())]))


def _without_source_names(spark: SparkSession) -> SparkSession:
    """A session of the same JVM (the tables, not the temp views) whose streams need no names:
    a scenario's in-memory streams cannot be given one, and have no checkpoint to keep."""
    scenario = spark.newSession()
    scenario.conf.set(SOURCE_NAMING, "false")
    scenario.conf.set(OFFSET_LOG_VERSION, "1")
    return scenario


def _batches_of(test_name: str, what: str, rows) -> set[int]:
    numbers = [(row.asDict() if isinstance(row, Row) else row).get(BATCH) for row in rows]
    if any(not isinstance(number, int) or number < 1 for number in numbers):
        raise ScenarioConfigError(
            f"Unit test {test_name}: in a micro-batch scenario each of {what} needs _batch, the "
            f"number (1, 2, ...) of the batch it arrives in or after which the table holds it."
        )
    return set(numbers)


def _streamed_fixtures(query: str, fixtures: Mapping[str, str], tested: Mapping[str, Any], graph: Mapping[str, Any]) -> set[str]:
    streamed = {read.relation for read in stream_reads(query) if read.kind == TABLE} & set(fixtures)
    sources = graph.get("sources") or {}
    for unique_id in (tested.get("depends_on") or {}).get("nodes") or []:
        source = sources.get(unique_id)
        if source and ((source.get("meta") or {}).get("stream")):
            streamed |= {fixture for fixture in fixtures if fixture == f"__dbt__cte__{source['source_name']}__{source['name']}"}
    return streamed


class _ScenarioTable:
    """The model's table as the write keeps it: rows appended, replaced whole, or merged by key."""

    def __init__(self, output_mode: str, unique_key):
        self.output_mode, self.unique_key, self.rows = output_mode, tuple(unique_key), []

    def write(self, rows: list[Row]) -> None:
        if self.output_mode == "complete":
            self.rows = list(rows)
        elif self.output_mode == "update":
            key = lambda row: tuple(row[column] for column in self.unique_key)  # noqa: E731
            changed = {key(row): row for row in rows}
            self.rows = [row for row in self.rows if key(row) not in changed] + list(changed.values())
        else:
            self.rows += rows
