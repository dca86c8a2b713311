"""A model's enforced contract (runtime/config/contracts.py): read from the node, compared with the
query's columns, its constraints named for Delta, and Delta's refusals retold. No Spark."""

from __future__ import annotations

import pytest
from pyspark.sql.types import (
    ArrayType, DecimalType, DoubleType, IntegerType, LongType, StringType, StructField, StructType,
    TimestampType,
)

from dbt_spark_streaming.config.contracts import Check, Contract, ContractError, canonical_type, with_not_null
from dbt_spark_streaming.delta.constraints import wanted_checks
from dbt_spark_streaming.errors import ConfigError, constraint_violated, explain
from dbt_spark_streaming.config.model import read_model_config


def column(name: str, data_type: str | None = None, *constraints: dict) -> dict:
    return {"name": name, "data_type": data_type, "constraints": list(constraints), "description": ""}


def node(*columns: dict, enforced=True, constraints=(), name: str = "readings") -> dict:
    return {
        "name": name, "alias": name, "schema": "silver", "unique_id": f"model.p.{name}",
        "resource_type": "model", "sources": [], "config": {"materialized": "streaming_table"},
        "contract": {"enforced": enforced, "alias_types": True},
        "columns": {c["name"]: c for c in columns}, "constraints": list(constraints),
    }


NOT_NULL = {"type": "not_null"}
READINGS = node(
    column("device_id", "string", NOT_NULL),
    column("heartbeat", "int", {"type": "check", "expression": "heartbeat > 0"}),
    column("at", "timestamp"),
)
QUERY = StructType([
    StructField("device_id", StringType()), StructField("heartbeat", IntegerType()),
    StructField("at", TimestampType()),
])


# --- read from the node ------------------------------------------------------------------------

def test_a_contract_not_enforced_is_none_and_its_constraints_are_ignored_as_dbt_does():
    assert Contract.from_node(node(column("id", None, NOT_NULL), enforced=False)) is None
    assert Contract.from_node({"name": "m", "config": {}}) is None


def test_columns_types_not_null_and_checks_are_read_with_names_delta_can_keep():
    contract = Contract.from_node(READINGS)

    assert [(c.name, c.data_type, c.not_null) for c in contract.columns] == [
        ("device_id", "string", True), ("heartbeat", "int", False), ("at", "timestamp", False),
    ]
    assert contract.not_null == ("device_id",)
    assert contract.checks == (Check("heartbeat_check", "heartbeat > 0"),)
    assert contract.warnings == ()


def test_model_level_constraints_name_their_columns_and_unnamed_checks_get_names_of_their_own():
    contract = Contract.from_node(node(
        column("low", "int", {"type": "check", "expression": "low >= 0"},
               {"type": "check", "expression": "low < 1000"}),
        column("high", "int"),
        constraints=[
            {"type": "not_null", "columns": ["LOW", "high"]},
            {"type": "check", "expression": "low <= high", "columns": ["low", "high"]},
            {"type": "check", "expression": "high < 5000", "name": "High_Bounded"},
        ],
    ))

    assert contract.not_null == ("low", "high")
    assert contract.checks == (
        Check("low_check", "low >= 0"), Check("low_check_2", "low < 1000"),
        Check("low_high_check", "low <= high"), Check("high_bounded", "high < 5000"),
    )


@pytest.mark.parametrize("kind, advice", [
    ("unique", "dbt's unique data test"),
    ("primary_key", "dbt's unique and not_null data test"),
    ("foreign_key", "dbt's relationships data test"),
    ("custom", "as a not_null or check constraint"),
])
def test_constraints_delta_does_not_enforce_are_warned_of_never_claimed(kind, advice):
    contract = Contract.from_node(node(column("id", "bigint", {"type": kind, "expression": "x"})))

    assert contract.checks == () and contract.not_null == ()
    (warning,) = contract.warnings
    assert warning.startswith(f"Model readings: the {kind} constraint on column id is not enforced")
    assert "Delta Lake enforces only not_null and check constraints, so it is ignored" in warning
    assert advice in warning and "warn_unsupported: false" in warning


def test_warn_unsupported_false_silences_the_warning():
    contract = Contract.from_node(node(
        column("id", "bigint"), constraints=[{"type": "primary_key", "columns": ["id"], "warn_unsupported": False}]
    ))
    assert contract.warnings == ()


# --- mistakes stop the model at compile time ---------------------------------------------------

@pytest.mark.parametrize("model, said", [
    (node(), "needs the model's columns, each with a data_type, under columns: in its YAML; none are declared"),
    (node(column("device_id", "string"), column("heartbeat"), column("at", " ")),
     "needs a data_type for every column; heartbeat, at have none"),
    (node(column("heartbeat", "int", {"type": "check"})),
     "the check constraint on column heartbeat has no expression"),
    (node(column("id", "int"), constraints=[{"type": "not_null"}]),
     "a model-level not_null constraint names no columns"),
    (node(column("id", "int"), constraints=[{"type": "check", "expression": "idd > 0", "columns": ["idd"]}]),
     "a model-level constraint names column 'idd', which the contract's columns do not list (id)"),
    (node(column("id", "int", {"type": "check", "expression": "id > 0", "name": "positive"},
                 {"type": "check", "expression": "id < 9", "name": "POSITIVE"})),
     "two check constraints are named 'positive'"),
    (node(column("id", "int", {"type": "check", "expression": "id > 0", "name": "id positive"})),
     "check constraint name 'id positive' is not a plain identifier"),
    (node(column("id", "int", {"type": "notnull"})),
     "constraint type 'notnull' on column id is not a dbt constraint type"),
])
def test_an_incomplete_contract_is_refused_naming_the_model_and_the_column(model, said):
    with pytest.raises(ContractError) as refused:
        Contract.from_node(model)
    assert str(refused.value).startswith("Model readings: ")
    assert said in str(refused.value)


def test_the_contract_is_read_with_the_model_config_at_compile_time(tmp_path, monkeypatch):
    monkeypatch.setenv("LAKEHOUSE_DIR", str(tmp_path))
    graph = {"nodes": {READINGS["unique_id"]: READINGS}, "sources": {}}

    assert read_model_config(READINGS, graph).contract == Contract.from_node(READINGS)
    untyped = node(column("heartbeat"))
    with pytest.raises(ConfigError, match="Model readings: contract: {enforced: true} needs a data_type"):
        read_model_config(untyped, {"nodes": {untyped["unique_id"]: untyped}, "sources": {}})


# --- the query's columns against the contract --------------------------------------------------

def test_matching_columns_keep_the_contract_whatever_their_order_case_and_type_synonyms():
    contract = Contract.from_node(node(
        column("AT", "TIMESTAMP"), column("heartbeat", "integer"), column("device_id", "STRING"),
        column("total", "numeric(12, 2)"), column("ids", "array< long >"),
    ))
    query = StructType([*QUERY.fields, StructField("total", DecimalType(12, 2)),
                        StructField("ids", ArrayType(LongType()))])

    assert contract.mismatches(query) == []
    contract.check_columns(query)


def test_a_column_of_another_type_is_named_with_both_types_and_the_cast_that_fixes_it():
    query = StructType([QUERY["device_id"], StructField("heartbeat", DoubleType()), QUERY["at"]])

    with pytest.raises(ContractError) as refused:
        Contract.from_node(READINGS).check_columns(query)

    assert str(refused.value) == (
        "Model readings: the query's columns do not match its contract (contract: {enforced: true}), "
        "so nothing was written:\n"
        "  - heartbeat: declared int, the model's is double (cast it in the query, e.g. "
        "cast(heartbeat as int) as heartbeat, or declare data_type: double)\n"
        "Column order does not matter; names and types do (in Spark's spelling)."
    )


def test_missing_and_extra_columns_are_each_named_with_their_fix():
    query = StructType([QUERY["device_id"], QUERY["heartbeat"], StructField("ward", StringType())])

    assert Contract.from_node(READINGS).mismatches(query) == [
        "at: declared timestamp, missing from the model's columns (select it, or remove it from "
        "the contract's columns)",
        "ward: string in the model's columns, not in the contract (add it to columns: with "
        "data_type: string, or leave it out of the query)",
    ]


def test_varchar_is_told_that_spark_streams_it_as_string():
    contract = Contract.from_node(node(column("device_id", "varchar(12)")))
    (said,) = contract.mismatches(StructType([StructField("device_id", StringType())]))
    assert "declare data_type: string" in said and "checks no length" in said


@pytest.mark.parametrize("declared, spark", [
    ("INTEGER", "int"), ("long", "bigint"), ("short", "smallint"), ("byte", "tinyint"),
    ("real", "float"), ("timestamp_ltz", "timestamp"), ("timestamp_ntz", "timestamp_ntz"),
    ("decimal", "decimal(10,0)"), ("dec(5)", "decimal(5,0)"), ("NUMERIC( 12 , 2 )", "decimal(12,2)"),
    ("array<integer>", "array<int>"), ("map<string, long>", "map<string,bigint>"),
    ("struct<a: int, `B c`: array<string> not null comment 'x'>", "struct<a:int,b c:array<string>>"),
    ("struct<a int, b long>", "struct<a:int,b:bigint>"),
    ("interval day to second", "interval day to second"), ("interval day to day", "interval day"),
    ("string collate UTF8_BINARY", "string"), ("char(3)", "char(3)"),
    ("not a type", "not a type"), ("array<int", "array<int"),
])
def test_types_are_compared_in_sparks_spelling(declared, spark):
    assert canonical_type(declared) == spark


def test_not_null_columns_are_not_null_in_the_schema_a_table_is_created_with():
    schema = with_not_null(QUERY, Contract.from_node(READINGS))

    assert [(f.name, f.nullable) for f in schema.fields] == [
        ("device_id", False), ("heartbeat", True), ("at", True)]
    assert with_not_null(QUERY, None) is QUERY


def test_a_not_null_column_the_table_lets_be_null_is_kept_by_a_check_of_its_own():
    contract = Contract.from_node(node(
        column("device_id", "string", NOT_NULL),
        column("heartbeat", "int", NOT_NULL, {"type": "check", "expression": "heartbeat > 0",
                                              "name": "heartbeat_not_null"}),
    ))
    table = StructType([StructField("device_id", StringType(), nullable=False),
                        StructField("Heartbeat", IntegerType(), nullable=True)])

    assert wanted_checks(contract, table) == [
        (Check("heartbeat_not_null", "heartbeat > 0"),
         "check constraint heartbeat_not_null (heartbeat > 0)"),
        (Check("heartbeat_not_null_", "`Heartbeat` is not null"), "not_null constraint on heartbeat"),
    ]


# --- Delta's refusal of a row, retold ----------------------------------------------------------

# As a streaming write's error reaches Python: the query's failure, its cause's text inside.
STREAM_FAILED = (
    "[STREAM_FAILED] Query [id = 38, runId = ec03] terminated with exception: "
    "[DELTA_VIOLATE_CONSTRAINT_WITH_VALUES] CHECK constraint heartbeat_check (heartbeat > 0) "
    "violated by row with values:\n - heartbeat : -4 SQLSTATE: XXKST\n=== Streaming Query ===\n"
    "Identifier: [id = 38, runId = ec03]\nCurrent Committed Offsets: {}\n"
)


def test_a_row_breaking_a_check_is_told_with_the_constraint_and_its_values():
    said = constraint_violated("readings", STREAM_FAILED)

    assert said.startswith(
        "Model readings: a row breaks the table's check constraint heartbeat_check (heartbeat > 0) "
        "(from the model's contract): heartbeat = -4. Nothing of this write reached the table; "
        "the next run reads the same input again."
    )
    assert "an expectation with action 'drop' or 'quarantine'" in said
    assert "is null or" not in said


def test_a_null_breaking_a_check_says_that_delta_counts_null_as_broken():
    said = constraint_violated("readings", (
        "[DELTA_VIOLATE_CONSTRAINT_WITH_VALUES] CHECK constraint low_high_check (low <= high) "
        "violated by row with values:\n - low : 3\n - high : null"
    ))
    assert "(low <= high) (from the model's contract): low = 3, high = null." in said
    assert "write `<column> is null or ...` to let nulls through" in said


def test_a_null_in_a_not_null_column_is_told_with_the_column():
    said = constraint_violated("readings", (
        "[DELTA_NOT_NULL_CONSTRAINT_VIOLATED] NOT NULL constraint violated for column: device_id.\n"
        " SQLSTATE: 23502"
    ))
    assert said.startswith(
        "Model readings: a row has device_id null, but the table's column device_id is NOT NULL "
        "(a not_null constraint of the model's contract). Nothing of this write reached the table"
    )
    assert "where device_id is not null" in said


def test_explain_finds_the_violation_in_the_whole_text_not_only_its_first_line():
    error = RuntimeError("[FOREACH_BATCH_USER_FUNCTION_ERROR] An error occurred in the user provided "
                         "function in foreach batch sink.\nCaused by: " + STREAM_FAILED)

    assert str(explain("readings", error)).startswith(
        "Model readings: a row breaks the table's check constraint heartbeat_check")
    assert constraint_violated("readings", "[DELTA_FAILED_TO_MERGE_FIELDS] x") is None
