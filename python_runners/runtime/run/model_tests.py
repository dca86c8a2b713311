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
from pyspark.sql.types import IntegerType, StructField, StructType, _parse_datatype_string

from python_runners.runtime.errors import ConfigError, StreamingModelError
from python_runners.runtime.config.event_time import Watermark
from python_runners.runtime.progress.recorder import UNIT_TEST_QUERY_PREFIX
from python_runners.runtime.config.stream_reads import STREAM_READ

BATCH = "_batch"
_FIXTURE = re.compile(r"\b(__dbt__cte__\w+)\s+as\s*\(", re.I)
_BATCH_COLUMN = re.compile(r"\bas\s+`?_batch`?(?=\W|$)", re.I)


class ScenarioConfigError(ConfigError):
    pass


def input_columns(
    spark: SparkSession, relation: str, name: str, stream_meta: Optional[Mapping[str, Any]], batched: bool,
) -> dict[str, str]:
    """The column types of a unit test input (lower-cased name: Spark type): its table's, or a
    streaming source's declared schema (`stream_meta`); `_batch` too when its rows carry one."""
    if spark.catalog.tableExists(relation.replace("`", "")):
        schema = spark.table(relation).schema
    else:
        schema = _declared_schema(relation, name, stream_meta)
    types = {field.name.lower(): field.dataType.simpleString() for field in schema}
    if batched:
        types[BATCH] = "int"
    return types


def _declared_schema(relation: str, name: str, stream_meta: Optional[Mapping[str, Any]]) -> StructType:
    if stream_meta is None:
        raise ScenarioConfigError(
            f"Unit test input {name}: {relation} does not exist, so the types of its given rows "
            f"are unknown. Build it first (`dbt build` builds a model before the unit tests of "
            f"the models that read it), or run `dbt run --empty --select {name}`."
        )
    if not stream_meta.get("schema"):
        raise ScenarioConfigError(
            f"Unit test input {name}: its source has no meta.stream.schema, so the types of its "
            f"given rows are unknown. Declare its schema (meta.stream.schema: 'id bigint, ...')."
        )
    return _parse_datatype_string(str(stream_meta["schema"]))


def actual_rows(
    spark: SparkSession, test: Mapping[str, Any], graph: Mapping[str, Any], sql: str,
    expected_rows: Optional[list] = None, given: Sequence[str] = (),
) -> dict[str, Any]:
    """The rows a unit test compares with its expected rows, as a temp view: the model's SQL run
    as one batch, or a scenario's table after each batch (with `_batch`). Returns the view's name
    and its columns' types and quoted names, as dbt's unit test macros take them. `given`: the
    test's inputs as written (`ref('x')`), which dbt leaves out of the SQL when the model does not
    read them."""
    tested = (graph.get("nodes") or {}).get(test.get("tested_node_unique_id") or "") or {}
    view = f"unit_test__{test['name']}__actual"
    drop_views(spark)  # what a test that failed in dbt's macros after this step left
    _refuse_inputs_not_read(test["name"], tested, given)
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
        mine = (table.name == f"unit_test__{test_name}__actual" or table.name.startswith(_input_view(test_name, ""))
                if test_name is not None else table.name.startswith("unit_test__"))
        if table.isTemporary and mine:
            spark.catalog.dropTempView(table.name)


def _input_view(test_name: str, fixture: str) -> str:
    return f"unit_test__{test_name}__input__{_input_name(fixture)}"


_GIVEN_REF = re.compile(r"""^\s*ref\(\s*['"]([^'"]+)['"]""")
_GIVEN_SOURCE = re.compile(r"""^\s*source\(\s*['"]([^'"]+)['"]\s*,\s*['"]([^'"]+)['"]""")


def _refuse_inputs_not_read(test_name: str, tested: Mapping[str, Any], given: Sequence[str]) -> None:
    refs = {ref.get("name") if isinstance(ref, Mapping) else ref[-1] for ref in tested.get("refs") or []}
    sources = {tuple(source) for source in tested.get("sources") or []}
    unread = []
    for text in given:
        ref, source = _GIVEN_REF.match(text), _GIVEN_SOURCE.match(text)
        if (ref and ref.group(1) not in refs) or (source and source.groups() not in sources):
            unread.append(text.strip())
    if unread:
        raise ScenarioConfigError(
            f"Unit test {test_name}: {tested.get('name')} does not read {', '.join(unread)}, given "
            f"as an input. Give rows for the inputs its SQL reads (the ref() and source() in it), "
            f"or remove that input."
        )


def _batched(test: Mapping[str, Any], sql: str, expected_rows: Optional[list]) -> bool:
    if any(BATCH in row for row in expected_rows or []):
        return True
    given = [_input_name(name) for name, body in fixtures_of(sql)[0].items() if _BATCH_COLUMN.search(body)]
    if given:
        raise ScenarioConfigError(
            f"Unit test {test['name']}: the given rows of {', '.join(given)} say in which batch "
            f"they arrive (_batch), but its expected rows do not say after which batch the table "
            f"holds them. Give each expected row a _batch too (a micro-batch scenario), or remove "
            f"_batch from the given rows (one batch)."
        )
    return False


def _read_as_batch(sql: str) -> str:
    return STREAM_READ.sub(lambda match: match["table"], sql)


def fixtures_of(sql: str) -> tuple[dict[str, str], str]:
    """The fixture CTEs dbt put in front of the model's SQL ({name: body}), and the SQL without them."""
    fixtures, kept, position = {}, [], 0
    for match in _FIXTURE.finditer(sql):
        if match.start() < position:
            continue
        end = _closing_parenthesis(sql, match.end() - 1)
        fixtures[match.group(1)] = sql[match.end():end]
        kept.append(sql[position:match.start()])
        position = end + 1
        comma = re.match(r"\s*,", sql[position:])
        if comma:
            position += comma.end()
    rest = "".join(kept) + sql[position:]
    rest = re.sub(r"\bwith\s+(?=select\b|\()", "", rest, count=1, flags=re.I) if fixtures else rest
    return fixtures, rest


def _closing_parenthesis(sql: str, opening: int) -> int:
    depth, index, quote = 0, opening, None
    while index < len(sql):
        char = sql[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = None
        elif char in "'\"`":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    raise ValueError("unbalanced parentheses in a unit test's fixture")


def run_scenario(
    spark: SparkSession, test: Mapping[str, Any], tested: Mapping[str, Any], graph: Mapping[str, Any],
    sql: str, expected_rows: list,
) -> DataFrame:
    """The model's rows after each batch of its given rows, through Spark's streaming engine."""
    from python_runners.runtime.config.model import read_model_config
    from python_runners.runtime.writes.expectation_checks import checked, kept_rows, model_columns

    name = test["name"]
    if (tested.get("config") or {}).get("materialized") != "streaming_table":
        raise ScenarioConfigError(
            f"Unit test {name}: rows with _batch (a micro-batch scenario) are for streaming_table "
            f"models; {tested.get('name')} is a {(tested.get('config') or {}).get('materialized')}. "
            f"Remove _batch to test its SQL as one batch."
        )
    config = read_model_config(tested, graph)
    fixtures, query = fixtures_of(sql)
    streamed = _streamed_fixtures(query, fixtures, tested, graph)
    feeds, batches, watermarked = {}, _batches_of(name, "its expected rows", expected_rows), set()
    for fixture, body in fixtures.items():
        rows = spark.sql(body)
        view = _input_view(name, fixture)
        if fixture in streamed:
            if BATCH not in rows.columns:
                raise ScenarioConfigError(
                    f"Unit test {name}: {config.model} streams from {_input_name(fixture)}, so in "
                    f"a scenario each of its given rows needs _batch (the micro-batch it arrives in)."
                )
            feed = _MemoryFeed(spark, rows.drop(BATCH).schema)
            frame = feed.frame
            for watermark in config.watermarks:
                if watermark.column in frame.columns:
                    frame = Watermark.apply(watermark, frame)
                    watermarked.add(watermark.column)
            feeds[fixture] = (feed, rows.collect())
            batches |= _batches_of(name, f"the given rows of {_input_name(fixture)}", feeds[fixture][1])
        elif BATCH in rows.columns:
            raise ScenarioConfigError(
                f"Unit test {name}: {config.model} reads {_input_name(fixture)} as a batch, not as "
                f"a stream, so all of its rows are there from the first batch; remove _batch from them."
            )
        else:
            frame = rows
        frame.createOrReplaceTempView(view)
        query = re.sub(rf"\bstream\s*\(\s*{fixture}\s*\)(\s*with\s*\([^()]*\))?|\b{fixture}\b", view, query)
    unused = [watermark.column for watermark in config.watermarks if watermark.column not in watermarked]
    if unused:
        raise ScenarioConfigError(
            f"Unit test {name}: {config.model}'s watermark column {', '.join(map(repr, unused))} is "
            f"not a column of any input it streams from ({', '.join(map(_input_name, feeds)) or 'none'})."
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
    return spark.createDataFrame(snapshots, StructType([*columns.fields, StructField(BATCH, IntegerType())]))


def _batches_of(test_name: str, what: str, rows) -> set[int]:
    numbers = [(row.asDict() if isinstance(row, Row) else row).get(BATCH) for row in rows]
    if any(not isinstance(number, int) or number < 1 for number in numbers):
        raise ScenarioConfigError(
            f"Unit test {test_name}: in a micro-batch scenario each of {what} needs _batch, the "
            f"number (1, 2, ...) of the batch it arrives in or after which the table holds it."
        )
    return set(numbers)


def _streamed_fixtures(query: str, fixtures: Mapping[str, str], tested: Mapping[str, Any], graph: Mapping[str, Any]) -> set[str]:
    streamed = {match["table"].strip() for match in STREAM_READ.finditer(query)} & set(fixtures)
    sources = graph.get("sources") or {}
    for unique_id in (tested.get("depends_on") or {}).get("nodes") or []:
        source = sources.get(unique_id)
        if source and ((source.get("meta") or {}).get("stream")):
            streamed |= {fixture for fixture in fixtures if fixture == f"__dbt__cte__{source['source_name']}__{source['name']}"}
    return streamed


def _input_name(fixture: str) -> str:
    return fixture.removeprefix("__dbt__cte__")


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


class _MemoryFeed:
    """An in-memory streaming input (Spark's MemoryStream) of rows with `schema`."""

    def __init__(self, spark: SparkSession, schema: StructType):
        jvm = spark._jvm
        self._spark = spark
        self._schema = schema
        encoder = jvm.org.apache.spark.sql.Encoders.row(spark._jsparkSession.parseDataType(schema.json()))
        self._stream = jvm.org.apache.spark.sql.execution.streaming.runtime.MemoryStream.apply(
            encoder, spark._jsparkSession
        )
        self.frame = DataFrame(self._stream.toDF(), spark)

    def add(self, rows: list[Row]) -> None:
        if not rows:
            return
        values = [tuple(row[field.name] for field in self._schema) for row in rows]
        java_rows = self._spark.createDataFrame(values, self._schema)._jdf.collectAsList()
        converters = self._spark._jvm.scala.jdk.javaapi.CollectionConverters
        self._stream.addData(converters.asScala(java_rows).toSeq())
