"""Maintenance killed: `dbt run-operation maintain_tables` (what `dbt-spark-streaming maintain`
runs, and the service's passes) SIGKILLed right after its compaction committed, and again right
after its VACUUM began deleting; the runs and passes after it lose and repeat nothing."""

from __future__ import annotations

from collections import Counter

import pytest

from python_runners.testing import delta_log
from python_runners.testing.killed_runs import KilledRuns
from python_runners.testing.landing import land_json_lines
from python_runners.testing.pipeline_process import PipelineProcess
from streaming_projects import write_streaming_project

SCHEMA = "killed_upkeep"
SOURCES = """
version: 2
sources:
  - name: landing
    tables:
      - name: events
        meta:
          stream: {format: json, path: upkeep_events, schema: "id bigint", max_files_per_trigger: 1}
"""
# No file retention: VACUUM deletes whatever no version references, at once.
MODELS = {
    "events": "{{ config(file_retention='0 seconds') }}\nselect id from {{ source('landing', 'events') }}",
    "copies": "{{ config(file_retention='0 seconds') }}\nselect id from stream({{ ref('events') }})",
}


@pytest.mark.slow
def test_maintenance_killed_during_compaction_and_vacuum_loses_and_repeats_nothing(spark, tmp_path):
    project = write_streaming_project(tmp_path / "project", "killed_upkeep", SCHEMA, MODELS, SOURCES)
    runs = KilledRuns(project, SCHEMA, tmp_path)
    landed: list[int] = []

    def land(first: int, files: int) -> None:
        for number in range(first, first + files):
            ids = [number * 10 + i for i in range(3)]
            land_json_lines(runs.landing("upkeep_events"), f"{number}.json", ({"id": i} for i in ids))
            landed.extend(ids)

    def maintain(name: str) -> PipelineProcess:
        return PipelineProcess(["run-operation", "maintain_tables"], runs.env, tmp_path / f"{name}.log",
                               project_dir=project)

    land(0, 5)
    runs.run("first")  # a file a batch: five in each table
    events = runs.table("events")
    assert len(delta_log.live_data_files(events)) == 5

    compacting = maintain("killed-compacting")
    compacting.kill_on_delta_commit(events, delta_log.latest_version(events), runs.timeout)
    assert delta_log.last_operation(events) == "OPTIMIZE", "killed right after compaction committed"

    vacuuming = maintain("killed-vacuuming")
    vacuuming.kill_on_delta_commit(events, delta_log.latest_version(events), runs.timeout)
    assert delta_log.last_operation(events) == "VACUUM START", "killed while VACUUM deletes"

    land(5, 3)
    runs.run("after-the-kills")
    finished = maintain("maintained")
    assert finished.wait(runs.timeout) == 0, finished.log_tail()
    land(8, 2)
    runs.run("last")

    for model in ("events", "copies"):
        ids = [row.id for row in spark.read.format("delta").load(str(runs.table(model))).collect()]
        assert max(Counter(ids).values()) == 1 and sorted(ids) == sorted(landed), model
