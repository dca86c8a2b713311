"""The chaos audit's bookkeeping without Spark: what each layer must hold after the kills, read
from the landed files, and how lost and duplicated records are counted."""

from __future__ import annotations

from collections import Counter

import pytest

from python_runners.demo.data import batch_records, land_batch
from python_runners.demo.recording_rules import check
from python_runners.testing.chaos.audit import LAYERS, expected_per_layer, faults, landed_recordings
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
