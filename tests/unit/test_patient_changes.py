"""The demo's patient change feed: deterministic, consistent as a history, imperfect as delivered."""

from __future__ import annotations

import json
from collections import Counter

from python_runners.demo.data import FIRST_BATCH_EPOCH, PATIENTS
from python_runners.demo.patient_changes import (
    ADMIT, DISCHARGE, TRANSFER, WARDS, batch_patient_changes, generated_changes, land_patient_changes,
)
from python_runners.testing.cdc_reference import scd2

BATCHES = 30


def every_change() -> list[dict]:
    return [change for number in range(BATCHES) for change in generated_changes(number)]


def test_each_change_happens_in_its_batchs_hour_and_lsn_order_is_time_order():
    for number in range(BATCHES):
        start = FIRST_BATCH_EPOCH + number * 3600
        assert all(start <= change["changed_at"] < start + 3600 for change in generated_changes(number))
    changes = every_change()
    assert [c["lsn"] for c in changes] == sorted(c["lsn"] for c in changes)
    assert [c["changed_at"] for c in changes] == sorted(c["changed_at"] for c in changes)
    assert len({c["changed_at"] for c in changes}) == len(changes)  # no two in one second


def test_a_patient_is_admitted_transferred_and_discharged_in_a_consistent_order():
    wards: dict[int, str | None] = {}
    for change in every_change():
        current = wards.get(change["mrn"])
        if change["op"] == ADMIT:
            assert current is None
        elif change["op"] == TRANSFER:
            assert current is not None and change["ward"] != current
        else:
            assert change["op"] == DISCHARGE and change["ward"] == current
        wards[change["mrn"]] = None if change["op"] == DISCHARGE else change["ward"]
        assert change["ward"] in WARDS
    assert set(wards) == set(range(100_000, 100_000 + PATIENTS))
    readmitted = Counter(c["mrn"] for c in every_change() if c["op"] == ADMIT)
    assert max(readmitted.values()) > 1


def test_one_patient_changes_several_times_in_a_batch():
    for number in range(1, BATCHES):
        assert max(Counter(c["mrn"] for c in generated_changes(number)).values()) >= 2


def test_delivery_is_late_and_repeated_but_loses_nothing_given_time():
    landed = [change for number in range(BATCHES + 3) for change in batch_patient_changes(number)]
    key = lambda change: json.dumps(change, sort_keys=True)  # noqa: E731
    counts = Counter(map(key, landed))
    assert set(map(key, every_change())) <= set(counts)
    assert max(counts.values()) == 2  # repeated, at most once more
    late = [
        change for number in range(BATCHES) for change in batch_patient_changes(number)
        if change["changed_at"] < FIRST_BATCH_EPOCH + number * 3600
    ]
    assert len(late) > BATCHES  # more than one a batch on average
    # some land after a newer change of the same patient
    seen_lsn: dict[int, int] = {}
    overtaken = 0
    for change in landed:
        overtaken += change["lsn"] < seen_lsn.get(change["mrn"], 0)
        seen_lsn[change["mrn"]] = max(seen_lsn.get(change["mrn"], 0), change["lsn"])
    assert overtaken > 0


def test_the_same_batch_lands_the_same_rows(tmp_path):
    first = land_patient_changes(5, tmp_path / "a")
    again = land_patient_changes(5, tmp_path / "b")
    assert first == again == batch_patient_changes(5)
    name = "changes-00005.json"
    assert (tmp_path / "a" / name).read_text() == (tmp_path / "b" / name).read_text()


def test_the_history_has_one_stay_at_a_time_per_patient():
    is_delete = lambda change: change["op"] == DISCHARGE  # noqa: E731
    stays = scd2(every_change(), ["mrn"], ["changed_at", "lsn"], is_delete, ["mrn", "ward"])
    per_patient: dict[int, list[tuple]] = {}
    for stay in stays:
        end = stay["__end_at"][0] if stay["__end_at"] else float("inf")
        per_patient.setdefault(stay["mrn"], []).append((stay["__start_at"][0], end))
    for intervals in per_patient.values():
        intervals.sort()
        assert all(end <= next_start for (_, end), (next_start, _) in zip(intervals, intervals[1:]))
