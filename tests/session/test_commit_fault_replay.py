"""A batch that fails right after its Delta commit, before its checkpoint's, is replayed by the
next run with every row exactly once: one row per kind of write.

The failure comes from the runtime's commit fault seam (writes/commit_faults.py), in this
process and in seconds. The state it leaves is asserted to be the one a SIGKILL at that moment
leaves: the batch's offsets written, its commit missing, its Delta version committed and
recording the batch. Real SIGKILLs of each kind are tests/processes/kill/'s.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from dbt_results import failure_messages
from dbt_spark_streaming.writes import commit_faults
from dbt_spark_streaming.writes.batch_marks import recorded_batch
from python_runners.testing import delta_log
from python_runners.testing.cdc_reference import scd1, scd2
from python_runners.testing.landing import land_json_lines, landing_folder
from streaming_projects import write_streaming_project

SCHEMA = "fault_replay"
SOURCES = """
version: 2
sources:
  - name: landing
    tables:
      - name: events
        meta:
          stream:
            format: json
            path: fault_replay_events
            create_path: true
            schema: id bigint, kind string
      - name: patient_changes
        meta:
          stream:
            format: json
            path: fault_replay_changes
            create_path: true
            schema: mrn bigint, ward string, op string, lsn bigint
"""
EVENTS = "{{ source('landing', 'events') }}"
CDC = """{{{{ config(
    materialized='cdc_table', keys=['mrn'], sequence_by='lsn', stored_as='{stored_as}',
    apply_as_deletes="op = 'D'", except_columns=['op']
) }}}}
select mrn, ward, op, lsn from {{{{ source('landing', 'patient_changes') }}}}"""
MODELS = {
    "appended": f"select id, kind from {EVENTS}",
    "kind_totals": (
        "{{ config(output_mode='complete') }}\n"
        f"select kind, count(*) as n, sum(id) as id_sum from {EVENTS} group by kind"
    ),
    "kind_latest": (
        "{{ config(output_mode='update', unique_key='kind') }}\n"
        f"select kind, count(*) as n, max(id) as last_id from {EVENTS} group by kind"
    ),
    "patients": CDC.format(stored_as="scd1"),
    "patient_history": CDC.format(stored_as="scd2"),
}
STORED = ["mrn", "ward", "lsn"]
HISTORY = [*STORED, "__start_at", "__end_at"]


def is_delete(change) -> bool:
    return change["op"] == "D"


def by_kind(events: list[dict]) -> dict[str, list[int]]:
    return {kind: [e["id"] for e in events if e["kind"] == kind] for kind in sorted({e["kind"] for e in events})}


def rows(rows: list[dict], columns: list[str]) -> list[tuple]:
    return sorted(tuple(row[column] for column in columns) for row in rows)


@dataclass(frozen=True)
class Replay:
    write: str
    model: str
    columns: list[str]
    expected: Callable[[dict[str, list[dict]]], list[tuple]]  # from everything landed


REPLAYS = [
    Replay("append", "appended", ["id", "kind"], lambda landed: rows(landed["events"], ["id", "kind"])),
    Replay("complete", "kind_totals", ["kind", "n", "id_sum"], lambda landed: [
        (kind, len(ids), sum(ids)) for kind, ids in by_kind(landed["events"]).items()]),
    Replay("update (MERGE)", "kind_latest", ["kind", "n", "last_id"], lambda landed: [
        (kind, len(ids), max(ids)) for kind, ids in by_kind(landed["events"]).items()]),
    Replay("cdc scd1", "patients", STORED, lambda landed: rows(
        scd1(landed["changes"], ["mrn"], ["lsn"], is_delete, STORED), STORED)),
    Replay("cdc scd2", "patient_history", HISTORY, lambda landed: rows(
        scd2(landed["changes"], ["mrn"], ["lsn"], is_delete, STORED), HISTORY)),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return str(write_streaming_project(tmp_path_factory.mktemp("fault_replay"), "fault_replay", SCHEMA, MODELS, SOURCES))


@pytest.fixture(scope="module")
def landed() -> dict[str, list[dict]]:
    return {"events": [], "changes": []}


def land(lakehouse, landed: dict) -> None:
    """Six events and four changes; every landing of the module's its own ids and sequences."""
    number = len(landed["events"]) // 6 + 1
    events = [{"id": number * 100 + i, "kind": "abc"[i % 3]} for i in range(6)]
    # A delete, an update and a late insert older than the update, for mrn number % 4.
    mrn, lsn = number % 4, number * 10
    changes = [
        {"mrn": mrn, "ward": "A", "op": "U", "lsn": lsn + 5},
        {"mrn": mrn, "ward": "B", "op": "I", "lsn": lsn + 2},
        {"mrn": mrn + 10, "ward": None, "op": "D", "lsn": lsn + 3},
        {"mrn": mrn + 10, "ward": "C", "op": "I", "lsn": lsn + 1},
    ]
    land_json_lines(landing_folder(lakehouse, "fault_replay_events"), f"events-{number}.json", events)
    land_json_lines(landing_folder(lakehouse, "fault_replay_changes"), f"changes-{number}.json", changes)
    landed["events"] += events
    landed["changes"] += changes


def checkpoint_batches(checkpoint: str, log: str) -> list[int]:
    folder = Path(checkpoint) / log
    return sorted(int(name) for name in os.listdir(folder) if name.isdigit())


@pytest.mark.parametrize("replay", REPLAYS, ids=[replay.write for replay in REPLAYS])
def test_a_batch_failed_after_its_commit_is_replayed_once(dbt, spark, project, lakehouse, landed, replay):
    model = replay.model
    table = Path(lakehouse.warehouse) / f"{SCHEMA}.db" / model
    checkpoint = lakehouse.checkpoint_path(f"{SCHEMA}/{model}")
    land(lakehouse, landed)
    assert dbt("run", "--select", model, project_dir=project).success
    version_before = delta_log.latest_version(table)

    land(lakehouse, landed)
    with commit_faults.failing_after_commit(f"{SCHEMA}.{model}") as armed:
        failed = dbt("run", "--select", model, project_dir=project)
    assert armed.fired and not failed.success
    assert "fault injected right after commit 1" in failure_messages(failed)

    # What a SIGKILL right after the commit leaves: the batch planned, not committed in the
    # checkpoint, and committed to the table under the batch's id.
    batch = checkpoint_batches(checkpoint, "offsets")[-1]
    assert checkpoint_batches(checkpoint, "commits")[-1] == batch - 1
    committed = delta_log.latest_version(table)
    assert committed > version_before
    commit_text = delta_log.commit_files(table, committed - 1)[0].path.read_text()
    assert recorded_batch(commit_text)[1] == batch

    replayed = dbt("run", "--select", model, project_dir=project)

    assert replayed.success, failure_messages(replayed)
    assert checkpoint_batches(checkpoint, "commits")[-1] == batch  # the replay is committed now
    assert delta_log.latest_version(table) == committed  # ... without writing the table again
    frame = spark.read.format("delta").load(str(table)).select(*replay.columns)
    found = sorted(tuple(row) for row in frame.collect())
    assert max(Counter(found).values()) == 1 and found == replay.expected(landed)
