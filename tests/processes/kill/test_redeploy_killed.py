"""A redeploy SIGKILLed at three moments, each run picking up where the last one was killed: while
the new version is built, between the build and the swap, and right after the swap's commit.
Readers see the old version, complete, until the swap; the run after the kills ends where an
unkilled redeploy ends: every landed row once, the new column on all of them, gold equal to a
recompute over the new silver."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from python_runners.testing.killed_runs import KilledRuns
from python_runners.testing.landing import land_json_lines
from python_runners.testing.pipeline_process import PipelineProcess
from streaming_projects import write_streaming_project

SCHEMA = "redeploy_killed"
SOURCES = """
version: 2
sources:
  - name: landing
    tables:
      - name: events
        meta:
          stream:
            format: json
            path: redeploy_events
            create_path: true
            max_files_per_trigger: 1
            schema: id bigint, kind string
"""
OLD_SILVER = "select id, kind from {{ source('landing', 'events') }}"
NEW_SILVER = "select id, kind, upper(kind) as kind_upper from {{ source('landing', 'events') }}"
GOLD = ("{{ config(output_mode='complete') }}\n"
        "select kind, count(*) as readings from stream({{ ref('readings') }}) group by kind")


def silver(sql: str) -> str:
    return f"{{{{ config(on_query_change='redeploy') }}}}\n{sql}"


def file_rows(number: int) -> list[dict]:
    return [{"id": number * 10 + index, "kind": "abc"[(number + index) % 3]} for index in range(3)]


def kill_when_file_says(run: PipelineProcess, path: Path, text: str, timeout: float) -> None:
    run.wait_for(f"{path} saying {text!r}", lambda: path.exists() and text in path.read_text(encoding="utf-8"),
                 timeout, interval=0.001)
    run.kill_tree()


@pytest.mark.slow
def test_a_redeploy_killed_three_times_ends_as_one_never_killed(spark, tmp_path):
    project = write_streaming_project(tmp_path / "project", "redeploy_killed", SCHEMA,
                                      {"readings": silver(OLD_SILVER), "kind_counts": GOLD}, SOURCES)
    runs = KilledRuns(project, SCHEMA, tmp_path)
    folder = runs.landing("redeploy_events")
    state = Path(runs.lakehouse.checkpoint_path(f"{SCHEMA}/readings") + "__redeploy.json")
    landed: list[dict] = []

    def land(number: int) -> None:
        rows = file_rows(number)
        land_json_lines(folder, f"events-{number}.json", rows, modified=1_800_000_000 + number)
        landed.extend(rows)

    def read(table: str):
        frame = spark.read.format("delta").load(str(runs.table(table)))
        return tuple(frame.columns), sorted(tuple(row) for row in frame.collect())

    for number in range(3):
        land(number)
    runs.run("first")
    old = read("readings")
    assert old[0] == ("id", "kind") and len(old[1]) == 9

    (project / "models" / "readings.sql").write_text(silver(NEW_SILVER) + "\n")

    # 1. While the new version is built: killed on its first batch's commit.
    land(3)
    runs.killed_on_commit("killed-building", "readings__next")
    assert json.loads(state.read_text())["step"] == "building"
    assert read("readings") == old  # readers see the old version, complete

    # 2. Built, not yet swapped: killed the moment the swap is recorded as next.
    land(4)
    swapping = runs.start("killed-swapping")
    kill_when_file_says(swapping, state, '"step": "swapping"', runs.timeout)
    columns, rows = read("readings")
    assert (columns, rows) == old or (columns == ("id", "kind", "kind_upper") and len(rows) == 15)

    # 3. Right after a commit to the table: the swap's, if the last kill came before it.
    land(5)
    runs.killed_on_commit("killed-swapped", "readings")

    land(6)
    runs.run("after-the-kills")

    columns, rows = read("readings")
    assert columns == ("id", "kind", "kind_upper")
    ids = [row[0] for row in rows]
    assert sorted(ids) == sorted(row["id"] for row in landed) and max(Counter(ids).values()) == 1
    assert all(kind_upper == kind.upper() for _, kind, kind_upper in rows)
    recomputed = sorted(Counter(kind for _, kind, _ in rows).items())
    assert sorted(read("kind_counts")[1]) == recomputed
    assert not runs.table("readings__next").exists() and not runs.table("kind_counts__next").exists()
    assert json.loads(state.read_text())["step"] == "done"
