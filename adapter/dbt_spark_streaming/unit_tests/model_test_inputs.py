"""The inputs of a dbt unit test of a streaming model (unit_tests/model_tests.py runs it): the fixture
CTEs dbt puts in front of the model's SQL, the column types of their given rows, the temp views
a scenario reads them through, and the inputs given that the model does not read.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional, Sequence

from pyspark.sql import SparkSession
from pyspark.sql.types import StructType, _parse_datatype_string

from dbt_spark_streaming.errors import ConfigError

BATCH = "_batch"
_FIXTURE = re.compile(r"\b(__dbt__cte__\w+)\s+as\s*\(", re.I)


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


def input_view(test_name: str, fixture: str) -> str:
    return f"unit_test__{test_name}__input__{input_name(fixture)}"


_GIVEN_REF = re.compile(r"""^\s*ref\(\s*['"]([^'"]+)['"]""")
_GIVEN_SOURCE = re.compile(r"""^\s*source\(\s*['"]([^'"]+)['"]\s*,\s*['"]([^'"]+)['"]""")


def refuse_inputs_not_read(test_name: str, tested: Mapping[str, Any], given: Sequence[str]) -> None:
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


def input_name(fixture: str) -> str:
    return fixture.removeprefix("__dbt__cte__")
