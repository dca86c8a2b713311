"""What a cdc_table user sees when the feed or the settings go wrong, through `dbt run`:

- a changed shape (stored_as scd1 -> scd2, a renamed key) stops the model before any query
  starts, naming the setting, both values and the fix; the table and the checkpoint are as they
  were, and the printed fix, run as printed, rebuilds the table;
- two different changes of one key with one sequence value (a tie) stop the batch by default,
  naming the key and the sequence; with on_sequence_tie='keep_last_landed' the documented winner
  is kept and the others are counted in the run line and in _stream_progress, the same after a
  batch failed right after its commit and run again.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.writes import commit_faults
from python_runners.testing.landing import land_json_lines, landing_folder
from dbt_results import failure_messages, node_results
from streaming_projects import write_streaming_project

pytestmark = pytest.mark.slow  # a feed's mistakes over several batches, one replayed: make test runs it, test-fast does not

SCHEMA = "cdc_mistakes"

SOURCES = """
version: 2
sources:
  - name: landing
    tables:
      - name: changes
        meta:
          stream: {format: json, path: cdc_mistake_changes, create_path: true, schema: "k bigint, val string, seq bigint"}
      - name: tied
        meta:
          stream: {format: json, path: cdc_tied_changes, create_path: true, schema: "k bigint, val string, seq bigint"}
"""


def cdc_model(keys: str = "['k']", stored_as: str = "scd1", select: str = "k, val, seq",
              source: str = "changes", extra: str = "") -> str:
    return (
        f"{{{{ config(materialized='cdc_table', keys={keys}, sequence_by='seq', "
        f"stored_as='{stored_as}'{extra}) }}}}\n"
        f"select {select} from {{{{ source('landing', '{source}') }}}}"
    )


def stdout_of(dbt, project, capfd, *args: str):
    capfd.readouterr()
    result = dbt(*args, project_dir=str(project))
    return result, capfd.readouterr().out


def checkpoint_files(lakehouse: Lakehouse, model: str) -> set[str]:
    root = Path(lakehouse.checkpoint_path(f"{SCHEMA}/{model}"))
    return {str(path.relative_to(root)) for path in root.rglob("*") if path.is_file()}


def table_version(spark, model: str) -> int:
    return spark.sql(f"describe history {SCHEMA}.{model}").agg({"version": "max"}).first()[0]


def rows(spark, model: str, *columns: str) -> list[tuple]:
    return sorted(tuple(row) for row in spark.table(f"{SCHEMA}.{model}").select(*columns).collect())


@pytest.mark.parametrize("changed, setting, old, new", [
    ({"stored_as": "scd2"}, "stored_as", "'scd1'", "'scd2'"),
    ({"keys": "['id']", "select": "k as id, val, seq"}, "keys", "'k'", "'id'"),
])
def test_a_changed_shape_stops_before_a_query_starts_and_the_printed_fix_rebuilds(
    spark, dbt, lakehouse, tmp_path, capfd, changed, setting, old, new
):
    model = f"shaped_{setting}"
    project = write_streaming_project(tmp_path / "project", "cdc_shape", SCHEMA, {model: cdc_model()}, SOURCES)
    folder = landing_folder(lakehouse, "cdc_mistake_changes")
    land_json_lines(folder, f"{model}-1.json", [{"k": 1, "val": "a", "seq": 1}, {"k": 1, "val": "b", "seq": 2}])
    assert dbt("run", "--select", model, project_dir=str(project)).success
    version, checkpoint = table_version(spark, model), checkpoint_files(lakehouse, model)

    (project / "models" / f"{model}.sql").write_text(cdc_model(**changed) + "\n")
    result, out = stdout_of(dbt, project, capfd, "run", "--select", model)

    assert not result.success
    assert f"Model {model}: its table {SCHEMA}.{model} was built with other cdc_table settings: " \
           f"{setting} was {old} and is {new} now" in out, out
    assert "Traceback" not in out and "Nothing was started" in out
    assert table_version(spark, model) == version and checkpoint_files(lakehouse, model) == checkpoint

    fix = re.search(r"`(dbt run --full-refresh --select [^`]+)`", out)
    assert fix, out
    rebuilt = dbt(*shlex.split(fix[1])[1:], project_dir=str(project))
    assert rebuilt.success, failure_messages(rebuilt)
    key = "id" if setting == "keys" else "k"
    if setting == "stored_as":  # both changes as versions, the first closed by the second
        assert rows(spark, model, key, "val", "__start_at", "__end_at") == [(1, "a", 1, 2), (1, "b", 2, None)]
    else:
        assert rows(spark, model, key, "val", "seq") == [(1, "b", 2)]


TIES = [
    [{"k": 1, "val": "a", "seq": 10}, {"k": 2, "val": "p", "seq": 30}, {"k": 2, "val": "q", "seq": 30}],
    [{"k": 2, "val": "r", "seq": 30}, {"k": 3, "val": "c", "seq": 5}],
]


def test_a_tie_fails_naming_the_key_then_keep_last_landed_keeps_the_last_and_counts_the_others(
    spark, dbt, lakehouse, tmp_path, capfd
):
    model = "tied_scd1"
    project = write_streaming_project(tmp_path / "project", "cdc_ties", SCHEMA, {
        model: cdc_model(source="tied"),
    }, SOURCES, serve_after_run=True)  # its on-run-end hook appends the progress table
    folder = landing_folder(lakehouse, "cdc_tied_changes")
    land_json_lines(folder, "ties-1.json", TIES[0])

    result, out = stdout_of(dbt, project, capfd, "run", "--select", model)
    assert not result.success
    assert f"Model {model}: 1 change(s) in one batch tie" in out and '"k":2' in out and '"sequence_by":30' in out, out
    assert "on_sequence_tie='keep_last_landed'" in out and "Traceback" not in out
    assert spark.table(f"{SCHEMA}.{model}").count() == 0

    (project / "models" / f"{model}.sql").write_text(
        cdc_model(source="tied", extra=", on_sequence_tie='keep_last_landed'") + "\n"
    )
    result = dbt("run", "--select", model, project_dir=str(project))
    assert result.success, failure_messages(result)
    assert rows(spark, model, "k", "val") == [(1, "a"), (2, "q")]  # the greatest of p and q
    message = node_results(result)[model].message
    assert "3 rows in, 2 written (2 inserted, 0 updated), 0 deleted, 1 tied change not kept " \
           "(on_sequence_tie 'keep_last_landed')" in message, message

    land_json_lines(folder, "ties-2.json", TIES[1])
    result = dbt("run", "--select", model, project_dir=str(project))
    assert result.success, failure_messages(result)
    assert rows(spark, model, "k", "val") == [(1, "a"), (2, "r"), (3, "c")]  # r landed last
    assert "1 tied change not kept" in node_results(result)[model].message

    progress = spark.sql(
        f"select cdc_changes_tied from default._stream_progress where query_name = '{SCHEMA}.{model}'"
    ).collect()
    assert sorted(row["cdc_changes_tied"] for row in progress) == [1, 1]


def test_keep_last_landed_keeps_the_same_winner_after_a_batch_failed_on_its_commit(spark, dbt, lakehouse, tmp_path):
    """The MERGE committed, the checkpoint not yet (the commit fault seam, as a SIGKILL at that
    moment leaves it): the batch is replayed, its ties counted as its first attempt found them."""
    model = "tied_scd2"
    schema = "cdc_mistakes_fault"
    project = write_streaming_project(tmp_path / "project", "cdc_ties_fault", schema, {
        model: cdc_model(source="tied", stored_as="scd2", extra=", on_sequence_tie='keep_last_landed'"),
    }, SOURCES.replace("path: cdc_tied_changes", "path: cdc_tied_fault_changes"))
    folder = landing_folder(lakehouse, "cdc_tied_fault_changes")

    land_json_lines(folder, "ties-1.json", TIES[0])
    assert dbt("run", project_dir=str(project)).success

    land_json_lines(folder, "ties-2.json", TIES[1])
    with commit_faults.failing_after_commit(f"{schema}.{model}") as armed:
        failed = dbt("run", project_dir=str(project))
    assert armed.fired and not failed.success
    again = dbt("run", project_dir=str(project))
    assert again.success, failure_messages(again)
    assert "1 tied change not kept" in node_results(again)[model].message

    table = spark.table(f"{schema}.{model}")
    current = sorted((row["k"], row["val"]) for row in table.collect() if row["__end_at"] is None)
    assert current == [(1, "a"), (2, "r"), (3, "c")]
    versions = table.filter("k = 2").collect()
    assert [(row["val"], row["__start_at"]) for row in versions] == [("r", 30)]
