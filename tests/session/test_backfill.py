"""Backfills: historical files (or a Delta table) appended once to an append-mode streaming table
through the model's own SQL and expectations, the streamed rows and the checkpoint untouched;
a later run says "already applied" and adds nothing, while the stream goes on; a backfill on a
model that does not append, of a path that does not exist, or of data whose schema is not the
stream's stops the model with the reason.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from dbt_spark_streaming.lifecycle import checkpoints
from python_runners.testing import delta_log
from python_runners.testing.landing import land_json_lines
from dbt_results import failure_messages, node_results
from streaming_projects import write_streaming_project

SCHEMA = "backfill"
NOW = 1767225600  # 2026-01-01


def reading(number: int, device_id: int | None = 1, heartbeat: float | None = 72.4) -> dict:
    return {"reading_id": f"r{number}", "device_id": device_id, "heartbeat": heartbeat, "time": NOW + number}


SOURCES = """
version: 2
sources:
  - name: landing
    tables:
      - name: readings
        meta:
          stream:
            format: json
            path: backfill_readings
            create_path: true
            schema: reading_id string, device_id int, heartbeat double, time bigint
"""

# The model's own cleaning, columns and expectation apply to the history as to the stream.
CLEANED = """{{{{ config({backfills}expectations=[
    {{'name': 'heartbeat_plausible', 'expression': 'heartbeat between 20 and 250', 'action': 'quarantine'}},
]) }}}}
select
    upper(reading_id) as reading_id,
    device_id,
    round(heartbeat) as heartbeat,
    timestamp_seconds(time) as recorded_at,
    _metadata.file_name as landed_file
from {{{{ source('landing', 'readings') }}}}"""
ARCHIVE = "backfills=[{'name': 'archive_2025', 'path': 'backfill_archive/2025', 'format': 'json'}], "

# History kept in a Delta table, backfilled in the run that creates the model's table.
DOUBLED = """{{ config(backfills=[{'name': 'legacy', 'table': 'backfill_history.legacy_readings'}]) }}
select reading_id, heartbeat * 2 as doubled from {{ source('landing', 'readings') }}"""

STREAMED = [[reading(1), reading(2, device_id=2), reading(3)], [reading(4), reading(5, heartbeat=90.0)]]
ARCHIVED = [[reading(101), reading(102, heartbeat=900.0)], [reading(103, device_id=3), reading(104), reading(105)]]
LEGACY = [reading(201), reading(202)]


def plausible(row: dict) -> bool:
    return 20 <= row["heartbeat"] <= 250


def checkpoint_files(checkpoint: Path) -> dict[str, bytes]:
    """Spark's files in the checkpoint (the project's own bookkeeping beside them left out)."""
    return {name: path.read_bytes() for path in sorted(checkpoint.rglob("*"))
            if path.is_file() and checkpoints.is_sparks(name := str(path.relative_to(checkpoint)))}


def cleaned_ids(spark) -> Counter:
    return Counter(row["reading_id"] for row in spark.table(f"{SCHEMA}.cleaned_readings").collect())


@pytest.fixture(scope="module")
def project(tmp_path_factory, spark):
    spark.sql("create database if not exists backfill_history")
    spark.createDataFrame(LEGACY, "reading_id string, device_id int, heartbeat double, time bigint") \
        .write.format("delta").mode("overwrite").saveAsTable("backfill_history.legacy_readings")
    return write_streaming_project(
        tmp_path_factory.mktemp("backfill"), "backfill_project", SCHEMA,
        {"cleaned_readings": CLEANED.format(backfills=""), "doubled_readings": DOUBLED}, SOURCES,
    )


def test_history_lands_once_through_the_model_with_streamed_rows_and_checkpoint_untouched(
    spark, dbt, project, lakehouse
):
    landing = Path(lakehouse.landing_path("backfill_readings"))
    checkpoint = Path(lakehouse.checkpoint_path(f"{SCHEMA}/cleaned_readings"))
    land_json_lines(landing, "stream-0.json", STREAMED[0])
    first = dbt("run", project_dir=str(project))
    assert first.success, failure_messages(first)
    assert "backfill legacy: 2 rows appended" in node_results(first)["doubled_readings"].message
    streamed_before = sorted(map(tuple, spark.table(f"{SCHEMA}.cleaned_readings").collect()))
    checkpoint_before = checkpoint_files(checkpoint)
    assert "offsets/0" in checkpoint_before and "commits/0" in checkpoint_before

    # The history arrives, and the model is told about it.
    archive = Path(lakehouse.landing_path("backfill_archive/2025"))
    for number, rows in enumerate(ARCHIVED):
        land_json_lines(archive, f"archive-{number}.json", rows)
    (project / "models" / "cleaned_readings.sql").write_text(CLEANED.format(backfills=ARCHIVE) + "\n")
    second = dbt("run", project_dir=str(project))

    assert second.success, failure_messages(second)
    message = node_results(second)["cleaned_readings"].message
    historical = [row for rows in ARCHIVED for row in rows]
    kept = [row for row in historical if plausible(row)]
    assert f"backfill archive_2025: {len(kept)} rows appended, 1 quarantined by expectations" in message, message
    assert "backfill legacy: already applied" in node_results(second)["doubled_readings"].message
    quarantined = spark.table(f"{SCHEMA}.cleaned_readings__quarantine").collect()
    assert [(row["reading_id"], row["_failed_expectations"]) for row in quarantined] == [("R102", ["heartbeat_plausible"])]
    assert checkpoint_files(checkpoint) == checkpoint_before  # not a byte of it changed
    table = spark.table(f"{SCHEMA}.cleaned_readings").collect()
    assert sorted(tuple(row) for row in table if row["landed_file"] == "stream-0.json") == streamed_before
    backfilled = {row["reading_id"]: row for row in table if row["landed_file"].startswith("archive-")}
    assert sorted(backfilled) == sorted(row["reading_id"].upper() for row in kept)
    for source in kept:  # transformed by the model's SQL, as streamed rows are
        row = backfilled[source["reading_id"].upper()]
        assert row["heartbeat"] == round(source["heartbeat"]) and row["device_id"] == source["device_id"]
        assert int(row["recorded_at"].timestamp()) == source["time"]

    # Another run: the stream goes on from its checkpoint, the backfill is not applied again.
    land_json_lines(landing, "stream-1.json", STREAMED[1])
    third = dbt("run", project_dir=str(project))

    assert third.success, failure_messages(third)
    message = node_results(third)["cleaned_readings"].message
    assert "STREAMED 2 rows in, 2 written" in message and "backfill archive_2025: already applied" in message
    streamed = [row for rows in STREAMED for row in rows]
    assert cleaned_ids(spark) == Counter(row["reading_id"].upper() for row in streamed + kept)
    doubled = Counter(row["reading_id"] for row in spark.table(f"{SCHEMA}.doubled_readings").collect())
    assert doubled == Counter(row["reading_id"] for row in streamed + LEGACY)
    assert spark.table(f"{SCHEMA}.cleaned_readings__quarantine").count() == 1
    commits = [p.name for p in (checkpoint / "commits").iterdir() if p.name.isdigit()]
    assert len(commits) == 2  # the two streamed landings, nothing of the backfill


ERROR_SOURCES = SOURCES.replace("path: backfill_readings", "path: backfill_error_readings")

COUNTED = """{{ config(output_mode='complete',
    backfills=[{'name': 'old_counts', 'path': 'backfill_archive/2025', 'format': 'json'}]) }}
select device_id, count(*) as readings from {{ source('landing', 'readings') }} group by device_id"""

ELSEWHERE = """{{ config(backfills=[{'name': 'lost', 'path': 'backfill_nowhere', 'format': 'json'}]) }}
select reading_id, heartbeat from {{ source('landing', 'readings') }}"""

MISMATCHED = """{{ config(backfills=[{'name': 'typed', 'path': 'backfill_typed', 'format': 'parquet'}]) }}
select reading_id, heartbeat from {{ source('landing', 'readings') }}"""


def test_a_backfill_that_cannot_run_stops_the_model_saying_why(spark, dbt, tmp_path, lakehouse):
    # Heartbeat as text and a column the stream does not have: not the stream's schema.
    spark.createDataFrame([("r1", 1, "72", NOW, "x")], "reading_id string, device_id int, heartbeat string, time bigint, note string") \
        .write.mode("overwrite").parquet(lakehouse.landing_path("backfill_typed"))
    project = write_streaming_project(
        tmp_path / "errors", "backfill_errors", "backfill_errors",
        {"counted_readings": COUNTED, "elsewhere_readings": ELSEWHERE, "mismatched_readings": MISMATCHED},
        ERROR_SOURCES,
    )
    land_json_lines(Path(lakehouse.landing_path("backfill_error_readings")), "stream-0.json", [reading(1)])

    result = dbt("run", project_dir=str(project))

    assert not result.success
    messages = {name: str(r.message) for name, r in node_results(result).items()}
    assert "Model counted_readings: backfills append historical rows once, which needs a streaming_table in output_mode 'append'; this model is output_mode 'complete'" in messages["counted_readings"], messages
    assert not spark.catalog.tableExists("backfill_errors.counted_readings")  # refused before anything ran
    missing = messages["elsewhere_readings"]
    assert "Model elsewhere_readings: backfill lost: its path" in missing and "backfill_nowhere" in missing, missing
    assert "does not exist" in missing
    mismatched = messages["mismatched_readings"]
    assert "Model mismatched_readings: backfill typed: the historical data does not have the schema" in mismatched, mismatched
    assert "not in the stream: note" in mismatched
    assert "other types: heartbeat (string in the history, double in the stream)" in mismatched
    for model in ("elsewhere_readings", "mismatched_readings"):  # streamed, nothing backfilled
        table = Path(lakehouse.warehouse) / "backfill_errors.db" / model
        metadata = [action["commitInfo"].get("userMetadata") or "" for commit in delta_log.commit_files(table)
                    for action in commit.actions() if "commitInfo" in action]
        assert not any("backfill" in text for text in metadata)
        assert spark.table(f"backfill_errors.{model}").count() == 1
