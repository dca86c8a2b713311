"""A model's inputs can change without a reset (docs/changing-models.md, "Adding or removing an
input"): each streaming input has a name, its checkpoint keeps offsets by name (Spark 4.2's offset
log version 2), so an input added starts from its beginning, an input removed leaves the others'
progress, and every row lands once. A checkpoint written by Spark 4.1 gets names on its first run
(lifecycle/checkpoint_names.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from dbt_results import failure_messages, node_results
from python_runners.testing.landing import land_json_lines, landing_folder
from streaming_projects import write_streaming_project

SCHEMA = "evolving"
EVENTS = "select id, kind from stream({{ source('evolving', 'events') }})"
OTHERS = "select id, kind from stream({{ source('evolving', 'others') }})"
SOURCES_OF = """
version: 2
sources:
  - name: evolving
    tables:
      - name: events
        meta: {{stream: {{format: json, path: {events}, schema: "id int, kind string"}}}}
      - name: others
        meta: {{stream: {{format: json, path: {others}, schema: "id int, kind string"}}}}
"""
COUNTED = "{{{{ config(output_mode='complete') }}}}\nselect kind, count(*) as n from ({inputs}) group by kind"
FIXTURE = Path(__file__).parents[1] / "fixtures" / "spark41_checkpoints"


def offsets_entry(checkpoint: Path) -> tuple[str, dict]:
    """The checkpoint's last offsets entry: its version and its sources' offsets by key."""
    last = max(int(name.name) for name in (checkpoint / "offsets").iterdir() if name.name.isdigit())
    lines = (checkpoint / "offsets" / str(last)).read_text().split("\n")
    return lines[0], dict(line.split(":", 1) for line in lines[2:] if line.strip())


def checkpoint_of(schema: str, model: str) -> Path:
    from dbt_spark_streaming.lakehouse import Lakehouse
    return Path(Lakehouse.from_env().checkpoint_path(f"{schema}/{model}"))


def ids(spark, table: str) -> list[int]:
    return sorted(row.id for row in spark.table(table).collect())


def test_inputs_added_removed_and_reordered_keep_every_row_once(dbt, spark, tmp_path, lakehouse):
    events, others = landing_folder(lakehouse, "evolving_events"), landing_folder(lakehouse, "evolving_others")
    land_json_lines(events, "1.json", [{"id": 1, "kind": "e"}, {"id": 2, "kind": "e"}])
    land_json_lines(others, "1.json", [{"id": 101, "kind": "o"}])
    project = write_streaming_project(
        tmp_path / "project", "evolving", SCHEMA, {"merged": EVENTS, "counted": COUNTED.format(inputs=EVENTS)},
        SOURCES_OF.format(events="evolving_events", others="evolving_others"))
    model = project / "models" / "merged.sql"
    assert dbt("run", project_dir=str(project)).success
    checkpoint = checkpoint_of(SCHEMA, "merged")
    assert offsets_entry(checkpoint)[0] == "v2" and set(offsets_entry(checkpoint)[1]) == {"evolving__events"}

    # Added: the new input is read from its start, the first goes on where it was; under an
    # aggregate, its rows join the groups the state holds.
    model.write_text(EVENTS + "\nunion all\n" + OTHERS)
    (project / "models" / "counted.sql").write_text(COUNTED.format(inputs=EVENTS + " union all " + OTHERS))
    land_json_lines(events, "2.json", [{"id": 3, "kind": "e"}])
    added = dbt("run", project_dir=str(project))
    assert added.success, failure_messages(added)
    assert ids(spark, f"{SCHEMA}.merged") == [1, 2, 3, 101]
    assert set(offsets_entry(checkpoint)[1]) == {"evolving__events", "evolving__others"}
    assert {row.kind: row.n for row in spark.table(f"{SCHEMA}.counted").collect()} == {"e": 3, "o": 1}

    # The first removed: no reset, the remaining input's rows once; what lands in the removed
    # input meanwhile is not read.
    model.write_text(OTHERS)
    land_json_lines(events, "3.json", [{"id": 4, "kind": "e"}])
    land_json_lines(others, "2.json", [{"id": 102, "kind": "o"}])
    removed = dbt("run", project_dir=str(project))
    assert removed.success, failure_messages(removed)
    assert ids(spark, f"{SCHEMA}.merged") == [1, 2, 3, 101, 102]

    # Back, in the other order: it goes on from its own offsets, neither repeating nor skipping.
    model.write_text(OTHERS + "\nunion all\n" + EVENTS)
    land_json_lines(others, "3.json", [{"id": 103, "kind": "o"}])
    back = dbt("run", project_dir=str(project))
    assert back.success, failure_messages(back)
    assert ids(spark, f"{SCHEMA}.merged") == [1, 2, 3, 4, 101, 102, 103]

    # Nothing new: up to date without starting its query (offsets held by name).
    idle = dbt("run", project_dir=str(project))
    assert idle.success and "no query started" in node_results(idle)["merged"].message, node_results(idle)["merged"].message


def test_an_input_whose_name_now_reads_another_folder_is_refused(dbt, spark, tmp_path, lakehouse):
    land_json_lines(landing_folder(lakehouse, "swap_a"), "1.json", [{"id": 1, "kind": "a"}])
    land_json_lines(landing_folder(lakehouse, "swap_b"), "1.json", [{"id": 9, "kind": "z"}])
    project = write_streaming_project(tmp_path / "project", "swapping", SCHEMA, {"swapped": EVENTS},
                                      SOURCES_OF.format(events="swap_a", others="swap_b"))
    assert dbt("run", project_dir=str(project)).success
    checkpoint = checkpoint_of(SCHEMA, "swapped")
    before = sorted(path.name for path in (checkpoint / "offsets").iterdir())

    (project / "models" / "sources.yml").write_text(SOURCES_OF.format(events="swap_b", others="swap_a"))
    (project / "models" / "swapped.sql").write_text(EVENTS + " where id > 0")  # a query change is what is checked
    refused = failure_messages(dbt("run", project_dir=str(project)))
    assert "its input 'evolving__events' is now json " in refused and "swap_b" in refused, refused
    assert refused.split("positions for it are in the files of ")[1].split(".")[0].endswith("swap_a"), refused
    assert sorted(path.name for path in (checkpoint / "offsets").iterdir()) == before
    assert ids(spark, f"{SCHEMA}.swapped") == [1]


def test_a_checkpoint_written_by_spark_41_gets_names_on_its_first_run(dbt, spark, tmp_path, lakehouse):
    """tests/fixtures/spark41_checkpoints: bronze rows 1-4, silver and gold (stateful) written
    from them by Spark 4.1.4 over two runs."""
    from spark41_fixture import MODELS, SCHEMA as schema, SOURCES  # the project that wrote the fixture
    spark.sql(f"create schema if not exists {schema}")
    for table in ("bronze", "silver", "gold"):
        location = Path(lakehouse.root) / "upgraded" / table
        shutil.copytree(FIXTURE / "tables" / table, location)
        spark.sql(f"create table {schema}.{table} using delta location '{location}'")
    for model in MODELS:
        shutil.copytree(FIXTURE / "checkpoints" / model, checkpoint_of(schema, model))
    assert offsets_entry(checkpoint_of(schema, "silver"))[0] == "v1"
    project = write_streaming_project(tmp_path / "project", "upgrade41", schema, MODELS, SOURCES)
    spark.sql(f"insert into {schema}.bronze values (5, 'b'), (6, 'c')")

    upgraded = dbt("run", project_dir=str(project))

    assert upgraded.success, failure_messages(upgraded)
    assert "query changed" not in node_results(upgraded)["silver"].message  # names are not a change
    assert ids(spark, f"{schema}.silver") == [1, 2, 3, 4, 5, 6]
    counts = {row.kind: row.n for row in spark.table(f"{schema}.gold").collect()}
    assert counts == {"a": 3, "b": 2, "c": 1}  # the state kept from 4.1 plus the new rows
    for model, name in (("silver", "bronze"), ("gold", "silver")):
        version, offsets = offsets_entry(checkpoint_of(schema, model))
        assert version == "v2" and set(offsets) == {name}, (model, version, offsets)
        assert json.loads(offsets[name])["reservoirVersion"] > 0

    # And from now on it holds: an input added to the upgraded silver.
    spark.sql(f"create table {schema}.bronze_two (id int, kind string) using delta")
    spark.sql(f"insert into {schema}.bronze_two values (7, 'c')")
    (project / "models" / "silver.sql").write_text(
        MODELS["silver"] + f"\nunion all\nselect id, kind from stream({schema}.bronze_two)")
    spark.sql(f"insert into {schema}.bronze values (8, 'a')")
    added = dbt("run", project_dir=str(project))
    assert added.success, failure_messages(added)
    assert ids(spark, f"{schema}.silver") == [1, 2, 3, 4, 5, 6, 7, 8]
    assert {row.kind: row.n for row in spark.table(f"{schema}.gold").collect()} == {"a": 4, "b": 2, "c": 2}
