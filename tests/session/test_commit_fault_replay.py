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
from pathlib import Path

import pytest

from dbt_results import failure_messages
from dbt_spark_streaming.writes import commit_faults
from dbt_spark_streaming.writes.batch_marks import recorded_batch
from python_runners.testing import delta_log
from python_runners.testing.landing import land_json_lines, landing_folder
from streaming_projects import write_streaming_project
from write_kinds import MODELS, WRITE_KINDS, WriteKind, sources, table_rows

pytestmark = pytest.mark.slow  # a failed commit replayed, for each kind of write: make test runs it, test-fast does not

SCHEMA = "fault_replay"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return str(write_streaming_project(tmp_path_factory.mktemp("fault_replay"), "fault_replay", SCHEMA, MODELS,
                                       sources("fault_replay")))


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


@pytest.mark.parametrize("kind", WRITE_KINDS, ids=[kind.write for kind in WRITE_KINDS])
def test_a_batch_failed_after_its_commit_is_replayed_once(dbt, spark, project, lakehouse, landed, kind: WriteKind):
    model = kind.model
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
    found = table_rows(spark, str(table), kind.columns)
    assert max(Counter(found).values()) == 1 and found == kind.expected(landed)
