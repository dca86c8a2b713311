"""Errors raised inside a micro-batch (a foreachBatch function: a cdc_table's apply, an update-mode
MERGE, an append) reach dbt's output as the project's own message, whole, with the fix: not
Spark's FOREACH_BATCH_USER_FUNCTION_ERROR wrapper with an empty "Reason:" or a bare Python
traceback. Nothing of the failed batch is written and its checkpoint does not move.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from python_runners.testing.landing import land_json_lines, landing_folder
from dbt_results import failure_messages
from streaming_projects import write_streaming_project

SCHEMA = "batch_errors"

SOURCES = """
version: 2
sources:
  - name: landing
    tables:
      - name: changes
        meta:
          stream: {format: json, path: batch_error_changes, create_path: true, schema: "k bigint, val string, seq bigint"}
      - name: readings
        meta:
          stream: {format: json, path: batch_error_readings, create_path: true, schema: "device string, n int"}
"""

MODELS = {
    "keyed": (
        "{{ config(materialized='cdc_table', keys=['k'], sequence_by='seq') }}\n"
        "select k, val, seq from {{ source('landing', 'changes') }}"
    ),
    "counted": (
        "{{ config(output_mode='update', unique_key=['device']) }}\n"
        "select device, count(*) as n from {{ source('landing', 'readings') }} group by device"
    ),
    "appended": "select device, n from {{ source('landing', 'readings') }}",
}

CONTRACTS = """
version: 2
models:
  - name: counted
    config: {contract: {enforced: true}}
    columns:
      - name: device
        data_type: string
      - name: n
        data_type: bigint
        constraints: [{type: check, name: n_small, expression: "n < 3"}]
  - name: appended
    config: {contract: {enforced: true}}
    columns:
      - name: device
        data_type: string
        constraints: [{type: not_null}]
      - name: n
        data_type: int
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = write_streaming_project(tmp_path_factory.mktemp("batch-errors"), "batch_errors", SCHEMA, MODELS, SOURCES)
    (root / "models" / "contracts.yml").write_text(CONTRACTS)
    return root


def failed_run(dbt, project, capfd, model: str) -> str:
    """dbt's stdout of a run of `model` that fails; also checks that dbt reported it failed."""
    capfd.readouterr()
    result = dbt("run", "--select", model, project_dir=str(project))
    out = capfd.readouterr().out
    assert not result.success
    assert failure_messages(result)
    return out


def assert_told_plainly(out: str, *expected: str) -> None:
    for text in expected:
        assert text in out, out
    assert "Traceback" not in out, out
    assert "FOREACH_BATCH_USER_FUNCTION_ERROR" not in out, out
    assert "Reason:\n" not in out and not any(line.rstrip().endswith("Reason:") for line in out.splitlines()), out


def committed_batches(checkpoint: Path) -> set[str]:
    commits = checkpoint / "commits"
    return {path.name for path in commits.iterdir()} if commits.exists() else set()


def test_a_cdc_change_with_a_null_key_stops_with_the_models_message_on_stdout(
    spark, dbt, project, lakehouse, capfd
):
    folder = landing_folder(lakehouse, "batch_error_changes")
    land_json_lines(folder, "good.json", [{"k": 1, "val": "a", "seq": 1}])
    assert dbt("run", "--select", "keyed", project_dir=str(project)).success
    checkpoint = Path(lakehouse.checkpoint_path(f"{SCHEMA}/keyed"))
    before = committed_batches(checkpoint)

    land_json_lines(folder, "null-key.json", [{"k": None, "val": "b", "seq": 2}, {"k": 2, "val": "c", "seq": 3}])
    out = failed_run(dbt, project, capfd, "keyed")

    assert_told_plainly(out, "Model keyed: 1 change row(s) in this batch have a null key (k)",
                        "filter them out in the model")
    assert committed_batches(checkpoint) == before
    assert [tuple(row) for row in spark.table(f"{SCHEMA}.keyed").collect()] == [(1, "a", 1)]
    (folder / "null-key.json").unlink()


def test_a_failing_update_mode_merge_and_append_say_the_constraint_and_the_fix(
    spark, dbt, project, lakehouse, capfd
):
    folder = landing_folder(lakehouse, "batch_error_readings")
    land_json_lines(folder, "first.json", [{"device": "a", "n": 1}])
    assert dbt("run", "--select", "counted", "appended", project_dir=str(project)).success

    land_json_lines(folder, "more.json", [{"device": "a", "n": 2}, {"device": "a", "n": 3}])
    out = failed_run(dbt, project, capfd, "counted")
    assert_told_plainly(out, "Model counted: a row breaks the table's check constraint n_small",
                        "Nothing of this write reached the table")
    assert spark.table(f"{SCHEMA}.counted").collect()[0]["n"] == 1

    land_json_lines(folder, "no-device.json", [{"device": None, "n": 5}])
    out = failed_run(dbt, project, capfd, "appended")
    assert_told_plainly(out, "Model appended: a row has device null", "NOT NULL")
    assert spark.table(f"{SCHEMA}.appended").count() == 1
