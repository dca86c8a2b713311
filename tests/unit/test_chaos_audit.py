"""The chaos run's bookkeeping without Spark: what each layer must hold after the kills, read
from the landed files, how lost and duplicated records are counted, and the kills that wait for
the service's maintenance."""

from __future__ import annotations

import json
import threading
from collections import Counter

import pytest

from python_runners.demo.data import batch_records, land_batch
from python_runners.demo.recording_rules import check
from python_runners.testing.chaos.audit import LAYERS, expected_per_layer, faults, landed_recordings
from python_runners.testing.chaos.kill_moments import plan
from python_runners.testing.chaos.stream_state import ModelPaths
from python_runners.testing.landing import land_json_lines


def test_each_layer_expects_the_records_silvers_expectations_put_there(tmp_path):
    batches = [land_batch(tmp_path, records=100, files=2) for _ in range(3)]
    landed = landed_recordings(tmp_path)
    expected = expected_per_layer(landed, check(landed))

    assert set(expected) == set(LAYERS)
    every = {row["recording_id"] for batch in batches for row in batch.rows}
    implausible = {row["recording_id"] for batch in batches for row in batch.checked.quarantined}
    future = {row["recording_id"] for batch in batches for row in batch.checked.dropped}
    assert expected["bronze"] == every
    assert expected["quarantine"] == implausible and len(implausible) == 6
    assert expected["silver"] == expected["joined"] == every - implausible - future
    assert len(future) == 6 and not future & (expected["silver"] | expected["quarantine"])


def test_lost_and_duplicated_records_in_a_layer():
    expected = {"a", "b", "c"}
    assert faults(expected, Counter(["a", "b", "c"])) == (0, 0)
    assert faults(expected, Counter(["a", "b"])) == (1, 0)
    assert faults(expected, Counter(["a", "b", "c", "c"])) == (0, 1)
    assert faults(expected, Counter(["a", "b", "c", "future"])) == (0, 1)  # where it should not be


def test_files_not_yet_renamed_into_place_are_not_landed(tmp_path):
    land_json_lines(tmp_path, "one.json", batch_records(0, 3))
    (tmp_path / ".two.json.tmp").write_text('{"recording_id": "half"')
    assert [row["recording_id"] for row in landed_recordings(tmp_path)] == [
        row["recording_id"] for row in batch_records(0, 3)
    ]


def test_a_recording_id_landed_twice_is_a_generator_bug(tmp_path):
    land_json_lines(tmp_path, "one.json", batch_records(0, 3))
    land_json_lines(tmp_path, "again.json", batch_records(0, 1))
    with pytest.raises(ValueError, match="landed a recording id twice"):
        landed_recordings(tmp_path)


def test_a_fifth_of_the_kills_wait_for_the_services_maintenance_and_catch_its_commit(tmp_path):
    table = ModelPaths("m", "s.m", tmp_path / "m", tmp_path / "checkpoint")
    log = table.table_path / "_delta_log"
    log.mkdir(parents=True)

    def commit(version: int, operation: str) -> None:
        (log / f"{version:020d}.json").write_text(json.dumps({"commitInfo": {"operation": operation}}) + "\n")

    commit(0, "CREATE TABLE")
    moments = plan(10, 1, [table], 30.0, maintenance_kills=2, maintained=[table])
    waiting = [moment for moment in moments if moment.needs_serving]
    assert len(moments) == 10 and len(waiting) == 2

    class Running:
        """The pipeline, as the wait asks after it; it asks once it has taken the log's version."""
        polling = threading.Event()

        @property
        def seconds_running(self) -> float:
            self.polling.set()
            return 1.0

        def has_exited(self) -> bool:
            return False

    pipeline, caught = Running(), []
    waiter = threading.Thread(target=lambda: caught.append(waiting[0].wait(pipeline)), daemon=True)
    waiter.start()
    assert pipeline.polling.wait(10)
    commit(1, "STREAMING UPDATE")  # a batch: not maintenance, the wait goes on
    commit(2, "OPTIMIZE")
    waiter.join(10)
    assert caught == ["OPTIMIZE of s.m"]
