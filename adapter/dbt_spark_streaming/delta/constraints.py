"""A model's contract on its Delta table: the query's columns checked against it before anything
is written, and its not_null and check constraints kept on the table for Delta to enforce.

A table is created with its not_null columns NOT NULL (contracts.with_not_null). Delta cannot
add NOT NULL to an existing column (Spark refuses "Cannot change nullable column to
non-nullable"), so on a table created before the contract said not_null, the same rule is a
CHECK constraint `<column>_not_null` (`<column> is not null`). Check constraints are added under
their names; one whose expression changed in the contract is replaced. Each ALTER is a Delta
commit, so only what is missing is added, and nothing when nothing is. A constraint removed from
the contract stays on the table until dropped by hand or a full refresh (docs/contracts.md).
"""

from __future__ import annotations

import re
from typing import Optional

from pyspark.errors import PySparkException
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, StructType
from py4j.protocol import Py4JJavaError

from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.config.contracts import Check, Contract, ContractError
from dbt_spark_streaming.errors import StreamingModelError, error_text, explain

PROPERTY_PREFIX = "delta.constraints."  # where Delta keeps a table's check constraints
_ROWS_VIOLATE = re.compile(r"(?P<rows>\d+) rows in .*? violate the new")


def check_query(
    spark: SparkSession, contract: Optional[Contract], schema: StructType,
    of: str = "the query's columns",
) -> None:
    """The columns `schema` gives the table keep the contract, and each check is a condition
    over them; nothing runs (an empty frame of `schema` is only analysed)."""
    if contract is None:
        return
    contract.check_columns(schema, of)
    if not contract.checks:
        return
    empty = spark.createDataFrame([], schema)
    for check in contract.checks:
        try:
            data_type = empty.select(F.expr(check.expression)).schema[0].dataType
        except (PySparkException, Py4JJavaError) as error:
            said = error_text(error).strip().splitlines()[0][:300]
            raise ContractError(
                f"Model {contract.model}: check constraint {check.name} ({check.expression}) is "
                f"not a condition over the table's columns ({', '.join(schema.fieldNames())}). "
                f"Correct its expression in the contract. Spark said: {said}"
            ) from None
        if not isinstance(data_type, BooleanType):
            raise ContractError(
                f"Model {contract.model}: check constraint {check.name} ({check.expression}) "
                f"gives a {data_type.simpleString()}, not true or false. Write a condition "
                f"that is true for every row the table may hold, e.g. heart_rate > 0."
            )


def add_missing(spark: SparkSession, table: str, contract: Optional[Contract]) -> list[str]:
    """Add to the existing `table` the contract's constraints it lacks; returns the names of the
    constraints added (none when the table already has them all: no commit)."""
    if contract is None or not contract.has_constraints:
        return []
    present = {
        key[len(PROPERTY_PREFIX):]: value
        for key, value in delta_tables.snapshot(spark, table).properties.items()
        if key.startswith(PROPERTY_PREFIX)
    }
    added = []
    for check, what in wanted_checks(contract, spark.table(table).schema):
        current = present.get(check.name)
        if current is not None and current.strip() == check.expression.strip():
            continue
        if current is not None:  # the contract changed the rule under the same name
            _alter(spark, contract.model, table, f"drop constraint if exists {check.name}")
        _add(spark, contract.model, table, check, what)
        added.append(check.name)
    return added


def wanted_checks(contract: Contract, table_schema: StructType) -> list[tuple[Check, str]]:
    """The contract's checks, and a check for each not_null column the table lets be null; each
    with what it means in words (for the error when existing rows break it)."""
    wanted = [(check, f"check constraint {check.name} ({check.expression})") for check in contract.checks]
    names = {check.name for check in contract.checks}
    nullable = {field.name.lower(): field.name for field in table_schema.fields if field.nullable}
    for column in contract.not_null:
        name_in_table = nullable.get(column.lower())
        if name_in_table is None:  # NOT NULL already, or not in the table yet
            continue
        name = f"{re.sub(r'[^0-9a-z_]', '_', column.lower())}_not_null"
        while name in names:  # a check of the contract's own has that name
            name += "_"
        names.add(name)
        check = Check(name, f"`{name_in_table}` is not null")
        wanted.append((check, f"not_null constraint on {column}"))
    return wanted


def _add(spark: SparkSession, model: str, table: str, check: Check, what: str) -> None:
    try:
        spark.sql(f"alter table {table} add constraint {check.name} check ({check.expression})")
    except (PySparkException, Py4JJavaError) as error:
        text = error_text(error)
        rows = _ROWS_VIOLATE.search(text)
        if "DELTA_NEW_CHECK_CONSTRAINT_VIOLATION" not in text or rows is None:
            raise explain(model, error) from None
        raise StreamingModelError(
            f"Model {model}: {rows['rows']} row(s) already in {table} break the contract's {what}, "
            f"so Delta refuses to add it and nothing was written. Find them with `select * from "
            f"{table} where not coalesce({check.expression}, false)`; fix or delete them, or "
            f"rebuild the table from all input with `dbt run --full-refresh --select {model}`."
        ) from None


def _alter(spark: SparkSession, model: str, table: str, change: str) -> None:
    try:
        spark.sql(f"alter table {table} {change}")
    except (PySparkException, Py4JJavaError) as error:
        raise explain(model, error) from None
