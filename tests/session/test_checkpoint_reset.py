"""Reset a checkpoint, keep the data: after `reset-checkpoint` a model's next run reads its inputs
from the chosen point (a Delta version, or now) while its table keeps every row it had; another
model reading the same source is untouched; mistakes stop the reset before anything is deleted.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from python_runners.ops import package_command
from dbt_spark_streaming.lifecycle.reset import checkpoint_reset
from dbt_spark_streaming.lifecycle.reset.checkpoint_reset import APPLIED, RECORD
from python_runners.testing import delta_log
from python_runners.testing.landing import land_json_lines
from dbt_results import failure_messages, node_results, rows_processed
from streaming_projects import write_streaming_project

SCHEMA = "checkpoint_reset"

SOURCES = """
version: 2
sources:
  - name: landing
    tables:
      - name: reset_readings
        meta:
          stream:
            format: json
            path: reset_readings
            create_path: true
            max_files_per_trigger: 1
            schema: reading_id string, value int
"""

MODELS = {
    # A file source, one file a batch: one Delta commit per landed file.
    "upstream_readings": "select reading_id, value from {{ source('landing', 'reset_readings') }}",
    # A Delta input: the upstream model's table as a stream.
    "downstream_readings": "select reading_id, value * 10 as value from stream({{ ref('upstream_readings') }})",
    # Another reader of the same source, first run after the upstream's reset.
    "late_readings": "select reading_id from {{ source('landing', 'reset_readings') }}",
}


def readings(*ids: str) -> list[dict]:
    return [{"reading_id": reading_id, "value": number} for number, reading_id in enumerate(ids)]


def ids(spark, model: str) -> list[str]:
    return sorted(row["reading_id"] for row in spark.table(f"{SCHEMA}.{model}").collect())


def table_folder(lakehouse, model: str) -> Path:
    return Path(lakehouse.warehouse) / f"{SCHEMA}.db" / model


def checkpoint(lakehouse, model: str) -> Path:
    return Path(lakehouse.checkpoints) / SCHEMA / model


def reset(project, *options: str) -> int:
    return package_command.run("reset-checkpoint", [*options, "--project-dir", str(project)])


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return write_streaming_project(
        tmp_path_factory.mktemp("checkpoint_reset"), "checkpoint_reset_project", SCHEMA, MODELS, SOURCES
    )


@pytest.fixture(scope="module")
def landing(lakehouse) -> Path:
    return Path(lakehouse.landing_path("reset_readings"))


def run(dbt, project, *models: str):
    result = dbt("run", "--select", *models, project_dir=str(project))
    assert result.success, failure_messages(result)
    return result


def test_reset_from_a_delta_version_reads_exactly_the_upstream_commits_from_it_and_keeps_the_rows(
    spark, dbt, project, lakehouse, landing
):
    land_json_lines(landing, "a.json", readings("a1", "a2"))
    run(dbt, project, "upstream_readings", "downstream_readings")
    assert ids(spark, "downstream_readings") == ["a1", "a2"]

    # Two more upstream commits, one per file; the downstream's checkpoint is then lost.
    land_json_lines(landing, "b.json", readings("b1"))
    land_json_lines(landing, "c.json", readings("c1", "c2"))
    run(dbt, project, "upstream_readings")
    upstream = table_folder(lakehouse, "upstream_readings")
    latest = delta_log.latest_version(upstream)
    added = {commit.version: commit for commit in delta_log.commit_files(upstream, after_version=latest - 2)}
    assert sorted(added) == [latest - 1, latest]  # b.json, then c.json
    shutil.rmtree(checkpoint(lakehouse, "downstream_readings"))

    # Without a reset, rows and no checkpoint stop the run, naming the way out.
    stopped = dbt("run", "--select", "downstream_readings", project_dir=str(project))
    assert not stopped.success
    assert "reset_checkpoint --args '{select: downstream_readings, from_now: true}'" in failure_messages(stopped)

    # From c.json's commit: b.json's rows are skipped, c.json's read once, a's rows kept.
    assert reset(project, "--select", "downstream_readings", "--from-version", str(latest)) == 0
    record = json.loads((checkpoint(lakehouse, "downstream_readings") / RECORD).read_text())
    assert record["from"] == {"kind": "version", "version": latest}
    result = run(dbt, project, "downstream_readings")
    assert rows_processed(result)["downstream_readings"] == 2
    assert ids(spark, "downstream_readings") == ["a1", "a2", "c1", "c2"]
    values = {row["reading_id"]: row["value"] for row in spark.table(f"{SCHEMA}.downstream_readings").collect()}
    assert values == {"a1": 0, "a2": 10, "c1": 0, "c2": 10}

    # The checkpoint now says where the stream is: the next run moves the record aside.
    assert checkpoint_reset.pending(spark, str(checkpoint(lakehouse, "downstream_readings"))) is None
    assert not (checkpoint(lakehouse, "downstream_readings") / RECORD).exists()
    assert (checkpoint(lakehouse, "downstream_readings") / APPLIED).exists()


def test_reset_from_now_reads_only_input_arriving_after_it_and_leaves_other_readers_alone(
    spark, dbt, project, lakehouse, landing
):
    before_up, before_down = ids(spark, "upstream_readings"), ids(spark, "downstream_readings")
    assert reset(project, "--select", "upstream_readings", "--from-now") == 0
    assert reset(project, "--select", "downstream_readings", "--from-now") == 0
    # No upstream commit since the reset yet: nothing read, the starting point kept for later.
    waiting = run(dbt, project, "downstream_readings")
    assert waiting.success, failure_messages(waiting)
    assert "no commit in its Delta input since the checkpoint was reset" in node_results(waiting)[
        "downstream_readings"].message
    assert ids(spark, "downstream_readings") == before_down
    land_json_lines(landing, "d.json", readings("d1"))

    result = run(dbt, project, "upstream_readings", "downstream_readings", "late_readings")
    processed = rows_processed(result)
    # The files landed before the reset are not read again, nor are upstream commits before it.
    assert ids(spark, "upstream_readings") == sorted(before_up + ["d1"])
    assert ids(spark, "downstream_readings") == sorted(before_down + ["d1"])
    # (The upstream's rows in count every line its files hold: the time filter comes after.)
    assert processed["downstream_readings"] == 1
    # The same source, read by a model whose checkpoint was not reset: every file.
    assert ids(spark, "late_readings") == ["a1", "a2", "b1", "c1", "c2", "d1"]


@pytest.mark.parametrize("options, said", [
    (["--select", "nope", "--from-now"],
     "no model named nope in this project. Give select: <model>, one of its streaming models: "
     "downstream_readings, late_readings, upstream_readings"),
    (["--select", "downstream_readings", "--from-version", "99"],
     "Model downstream_readings: from_version 99 is beyond the latest version"),
    (["--select", "upstream_readings", "--from-version", "1"],
     "Model upstream_readings: from_version sets where one Delta input starts; this model streams "
     "from landing.reset_readings (json files). Use from_timestamp"),
    (["--select", "upstream_readings", "--from-offsets", '{"readings": {"0": 5}}'],
     "Model upstream_readings: from_offsets sets Kafka offsets"),
])
def test_mistakes_name_the_model_and_the_fix_and_delete_nothing(
    spark, project, lakehouse, capsys, options, said
):
    folders = [checkpoint(lakehouse, model) for model in MODELS]
    kept = [sorted(path.rglob("*")) for path in folders]
    assert reset(project, *options) != 0
    printed = capsys.readouterr()
    assert said in " ".join((printed.out + printed.err).split())
    assert [sorted(path.rglob("*")) for path in folders] == kept
