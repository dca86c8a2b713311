"""Enforced dbt contracts on streaming_table, cdc_table and copy_into models, through `dbt run`:
a query that breaks its contract stops before any table exists; the contract's not_null and check
constraints are on the Delta table (added to an existing one that lacks them, once); a row that
breaks one stops the write with the model, the constraint and the value named, the table as it was.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from pyspark.sql.types import IntegerType, StructField, StructType

from dbt_results import failure_messages, node_results
from python_runners.ops.dbt_invocation import invoke_dbt, target_args
from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.config.contracts import Contract, ContractColumn, ContractError
from dbt_spark_streaming.delta.constraints import add_missing, check_query
from dbt_spark_streaming.errors import StreamingModelError
from python_runners.testing.landing import land_json_lines, landing_folder
from streaming_projects import write_streaming_project

SCHEMA = "contracts"

SOURCES = """
version: 2
sources:
  - name: c
    tables:
      - name: readings
        meta: {stream: {format: json, path: contract_readings, schema: "device_id string, heartbeat int"}}
      - name: copy_readings
        meta: {stream: {format: json, path: contract_copy_readings, schema: "device_id string, heartbeat int"}}
      - name: legacy_readings
        meta: {stream: {format: json, path: contract_legacy_readings, schema: "device_id string, heartbeat int"}}
      - name: patient_changes
        meta: {stream: {format: json, path: contract_patient_changes, schema: "mrn bigint, ward string, op string, lsn bigint"}}
"""

MODELS = {
    "readings": "select device_id, heartbeat from {{ source('c', 'readings') }}",
    "mistyped": "select device_id, heartbeat / 2 as heartbeat from {{ source('c', 'readings') }}",
    "copied": (
        "{{ config(materialized='copy_into') }}\n"
        "select device_id, heartbeat from {{ source('c', 'copy_readings') }}"
    ),
    "legacy": "select device_id, heartbeat from {{ source('c', 'legacy_readings') }}",
    "patients": (
        "{{ config(materialized='cdc_table', keys=['mrn'], sequence_by='lsn', stored_as='scd2', "
        "apply_as_deletes=\"op = 'D'\", except_columns=['op']) }}\n"
        "select mrn, ward, op, lsn from {{ source('c', 'patient_changes') }}"
    ),
}

DEVICE_ID_NOT_NULL = """
      - name: device_id
        data_type: string
        constraints: [{type: not_null}]"""
HEARTBEAT_POSITIVE = """
      - name: heartbeat
        data_type: int
        constraints: [{type: check, name: heartbeat_positive, expression: "heartbeat > 0"}]"""
CONTRACTS = f"""
version: 2
models:
  - name: readings
    config: {{contract: {{enforced: true}}}}
    columns:{DEVICE_ID_NOT_NULL}
        # Delta has no unique constraint: warned of, not claimed
      - name: heartbeat
        data_type: int
        constraints: [{{type: check, name: heartbeat_positive, expression: "heartbeat > 0"}}, {{type: unique}}]
  - name: mistyped
    config: {{contract: {{enforced: true}}}}
    columns:
      - {{name: device_id, data_type: string}}
      - {{name: heartbeat, data_type: int}}
  - name: copied
    config: {{contract: {{enforced: true}}}}
    columns:{DEVICE_ID_NOT_NULL}
      - {{name: heartbeat, data_type: integer}}
  # a cdc_table's contract is of its table: the feed's stored columns (no op) and scd2's validity
  - name: patients
    config: {{contract: {{enforced: true}}}}
    columns:
      - name: mrn
        data_type: bigint
        constraints: [{{type: not_null}}]
      - {{name: ward, data_type: string}}
      - {{name: lsn, data_type: bigint}}
      - {{name: __start_at, data_type: bigint}}
      - {{name: __end_at, data_type: bigint}}
"""
LEGACY_CONTRACT = f"""
  - name: legacy
    config: {{contract: {{enforced: true}}}}
    columns:{DEVICE_ID_NOT_NULL}{HEARTBEAT_POSITIVE}
"""


def table(model: str) -> str:
    return f"{SCHEMA}.{model}"


def said(message: str) -> str:
    """dbt's message with its indentation undone."""
    return " ".join(message.split())


def check_constraints(spark, model: str) -> dict[str, str]:
    properties = delta_tables.snapshot(spark, table(model)).properties
    return {key: value for key, value in properties.items() if key.startswith("delta.constraints.")}


@pytest.fixture(scope="module")
def project(tmp_path_factory, spark):
    root = write_streaming_project(tmp_path_factory.mktemp("contracts"), "contracts", SCHEMA, MODELS, SOURCES)
    (root / "models" / "contracts.yml").write_text(CONTRACTS)
    return root


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    """The module's dbt target folder: its manifest holds the models as dbt parsed them."""
    return tmp_path_factory.mktemp("contracts-target")


def run(project, target, *args: str, callbacks=()):
    return invoke_dbt(["run", *args, *target_args(target)], str(project), callbacks=callbacks)


def manifest_node(target, model: str) -> dict:
    return json.loads((target / "manifest.json").read_text())["nodes"][f"model.contracts.{model}"]


@pytest.fixture(scope="module")
def first_run(spark, project, lakehouse, target):
    """Every model run once over good rows; the warnings dbt logged on the way."""
    good = [{"device_id": "a", "heartbeat": 60}, {"device_id": "b", "heartbeat": 70}]
    for path in ("contract_readings", "contract_copy_readings", "contract_legacy_readings"):
        land_json_lines(landing_folder(lakehouse, path), "good.json", good)
    land_json_lines(landing_folder(lakehouse, "contract_patient_changes"), "changes.json", [
        {"mrn": 1, "ward": "A", "op": "I", "lsn": 1}, {"mrn": 1, "ward": "B", "op": "U", "lsn": 2},
    ])
    warnings: list[str] = []

    def hear(event) -> None:
        if event.info.level == "warn":
            warnings.append(event.info.msg)

    result = run(project, target, callbacks=[hear])
    return result, warnings


def test_a_query_that_breaks_its_contract_stops_before_its_table_exists(spark, first_run):
    result, _ = first_run
    mistyped = node_results(result)["mistyped"]

    assert mistyped.status == "error"
    assert (
        "Model mistyped: the query's columns do not match its contract (contract: {enforced: "
        "true}), so nothing was written: - heartbeat: declared int, the model's is double "
        "(cast it in the query, e.g. cast(heartbeat as int) as heartbeat, or declare data_type: "
        "double)"
    ) in said(mistyped.message)
    assert not spark.catalog.tableExists(table("mistyped"))


def test_matching_contracts_run_and_their_tables_carry_the_constraints(spark, first_run):
    result, warnings = first_run
    statuses = {name: r.status for name, r in node_results(result).items()}

    assert statuses == {
        "readings": "success", "copied": "success", "legacy": "success", "patients": "success",
        "mistyped": "error",
    }, failure_messages(result)
    for model in ("readings", "copied"):
        assert spark.table(table(model)).count() == 2
        assert spark.table(table(model)).schema["device_id"].nullable is False
    assert check_constraints(spark, "readings") == {"delta.constraints.heartbeat_positive": "heartbeat > 0"}
    patients = spark.table(table("patients"))
    assert patients.columns == ["mrn", "ward", "lsn", "__start_at", "__end_at"]
    assert patients.schema["mrn"].nullable is False and patients.count() == 2
    assert any(
        "Model readings: the unique constraint on column heartbeat is not enforced: Delta Lake "
        "enforces only not_null and check constraints, so it is ignored." in warning
        for warning in warnings
    ), warnings


def test_rows_breaking_a_constraint_stop_the_write_and_an_older_table_gets_the_constraints(
    spark, project, target, lakehouse, first_run
):
    (project / "models" / "contracts.yml").write_text(CONTRACTS + LEGACY_CONTRACT)
    land_json_lines(landing_folder(lakehouse, "contract_readings"), "bad.json",
                    [{"device_id": "c", "heartbeat": 80}, {"device_id": "d", "heartbeat": -4}])
    land_json_lines(landing_folder(lakehouse, "contract_copy_readings"), "bad.json",
                    [{"device_id": "e", "heartbeat": 80}, {"device_id": None, "heartbeat": 50}])
    readings_version = delta_tables.current_version(spark, table("readings"))

    result = run(project, target, "--select", "readings", "copied", "legacy")

    results = node_results(result)
    assert results["readings"].status == "error"
    assert (
        "Model readings: a row breaks the table's check constraint heartbeat_positive "
        "(heartbeat > 0) (from the model's contract): heartbeat = -4. Nothing of this write "
        "reached the table"
    ) in said(results["readings"].message)
    # Nothing written, and no constraint added again: not a single commit.
    assert delta_tables.current_version(spark, table("readings")) == readings_version
    assert results["copied"].status == "error"
    assert (
        "Model copied: a row has device_id null, but the table's column device_id is NOT NULL"
    ) in said(results["copied"].message)
    assert spark.table(table("copied")).count() == 2

    # legacy's table was created before its contract: Delta cannot make device_id NOT NULL now,
    # so a check keeps the rule; both added once, and asked again nothing is added.
    assert results["legacy"].status == "success", results["legacy"].message
    assert check_constraints(spark, "legacy") == {
        "delta.constraints.heartbeat_positive": "heartbeat > 0",
        "delta.constraints.device_id_not_null": "`device_id` is not null",
    }
    legacy_version = delta_tables.current_version(spark, table("legacy"))
    legacy = Contract.from_node(manifest_node(target, "legacy"))
    assert add_missing(spark, table("legacy"), legacy) == []
    assert delta_tables.current_version(spark, table("legacy")) == legacy_version


def test_a_constraint_that_rows_already_in_the_table_break_is_refused_with_the_rows_to_fix(spark):
    spark.sql(f"create schema if not exists {SCHEMA}")
    spark.sql(f"create table {SCHEMA}.older (id int, heartbeat int) using delta")
    spark.sql(f"insert into {SCHEMA}.older values (1, 60), (null, 70), (3, -4), (4, -5)")
    version = delta_tables.current_version(spark, f"{SCHEMA}.older")
    contract = Contract.from_node({
        "name": "older", "contract": {"enforced": True}, "columns": {
            "id": {"name": "id", "data_type": "int", "constraints": [{"type": "not_null"}]},
            "heartbeat": {"name": "heartbeat", "data_type": "int",
                          "constraints": [{"type": "check", "expression": "heartbeat > 0"}]},
        },
    })

    with pytest.raises(StreamingModelError) as refused:
        add_missing(spark, f"{SCHEMA}.older", contract)

    assert str(refused.value) == (
        f"Model older: 2 row(s) already in {SCHEMA}.older break the contract's check constraint "
        f"heartbeat_check (heartbeat > 0), so Delta refuses to add it and nothing was written. "
        f"Find them with `select * from {SCHEMA}.older where not coalesce(heartbeat > 0, false)`; "
        f"fix or delete them, or rebuild the table from all input with "
        f"`dbt run --full-refresh --select older`."
    )
    assert delta_tables.current_version(spark, f"{SCHEMA}.older") == version
    with pytest.raises(ContractError, match=(
        r"Model older: check constraint heartbeat_check \(heartbeat > 0\) is not a condition over "
        r"the table's columns \(id, hr\)\. Correct its expression in the contract\. Spark said: "
        r"\[UNRESOLVED_COLUMN")):
        check_query(spark, replace(contract, columns=(ContractColumn("id", "int"), ContractColumn("hr", "int"))), StructType([
            StructField("id", IntegerType()), StructField("hr", IntegerType())]))
