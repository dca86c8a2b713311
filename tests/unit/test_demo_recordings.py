"""The demo's recordings: deterministic batches, a few records in each that break silver's
expectations at known places, and the plain-Python rules that say where each record ends up."""

from __future__ import annotations

import re
import time

from python_runners.demo import recording_rules
from python_runners.demo.data import (
    BAD_RECORD_EVERY, FAR_FUTURE_EPOCH, FUTURE_TIME_AT, IMPLAUSIBLE_HEARTBEAT_AT, batch_records, land_batch,
)
from python_runners.demo.recording_rules import RULES, action_on, check, failed_rules
from python_runners import REPO_ROOT

BATCHES = 20
NOW = 1_800_000_000  # 2027-01-15: after every good record of these batches, long before 2100


def place(row: dict) -> int:
    return int(row["recording_id"].split("-")[1]) % BAD_RECORD_EVERY


def recording(**values) -> dict:
    return {"recording_id": "r", "device_id": 1, "mrn": 100_000, "time": NOW - 60, "heartbeat": 72.0, **values}


def test_the_same_batch_lands_the_same_rows(tmp_path):
    first = land_batch(tmp_path / "a", records=120, files=2)
    again = land_batch(tmp_path / "b", records=120, files=2)
    assert first.rows == again.rows == tuple(batch_records(0, 120))
    for path_a, path_b in zip(first.files, again.files):
        assert open(path_a).read() == open(path_b).read()
    assert land_batch(tmp_path / "a", records=120, files=2).number == 1


def test_in_every_fifty_records_one_is_quarantined_and_one_dropped_at_fixed_places():
    for number in range(BATCHES):
        checked = check(batch_records(number, 200), NOW)
        assert [place(row) for row in checked.quarantined] == [IMPLAUSIBLE_HEARTBEAT_AT] * 4
        assert [place(row) for row in checked.dropped] == [FUTURE_TIME_AT] * 4
        assert len(checked.kept) == 192
        assert checked.warnings["device_known"] > 0  # devices 10 and 11 are not in the seed


def test_a_batch_smaller_than_a_bad_records_place_is_all_good():
    for number in range(BATCHES):
        assert check(batch_records(number, IMPLAUSIBLE_HEARTBEAT_AT), NOW).kept == tuple(
            batch_records(number, IMPLAUSIBLE_HEARTBEAT_AT)
        )


def test_implausible_heartbeats_are_zero_nine_hundred_or_missing_and_future_times_are_in_2100():
    rows = [row for number in range(BATCHES) for row in batch_records(number, 200)]
    implausible = [row["heartbeat"] for row in rows if place(row) == IMPLAUSIBLE_HEARTBEAT_AT]
    assert set(implausible) == {0.0, 900.0, None}
    future = [row["time"] for row in rows if place(row) == FUTURE_TIME_AT]
    assert all(FAR_FUTURE_EPOCH <= moment < FAR_FUTURE_EPOCH + 365 * 86400 for moment in future)
    others = [row for row in rows if place(row) not in (IMPLAUSIBLE_HEARTBEAT_AT, FUTURE_TIME_AT)]
    assert all(40 <= row["heartbeat"] <= 180 and row["time"] < NOW for row in others)


def test_each_bad_record_breaks_one_rule_that_leaves_it_out_so_a_future_one_is_not_quarantined():
    for number in range(BATCHES):
        checked = check(batch_records(number, 200), NOW)
        for row in checked.quarantined:
            assert set(failed_rules(row, NOW)) - {"device_known"} == {"heartbeat_plausible"}
        for row in checked.dropped:
            assert set(failed_rules(row, NOW)) - {"device_known"} == {"not_from_the_future"}


def test_a_landed_batch_says_how_many_records_silver_keeps(tmp_path):
    batch = land_batch(tmp_path, records=120, files=1)
    # quarantined at 7, 57, 107; dropped at 31, 81
    assert (batch.records, batch.kept) == (120, 115)
    assert (len(batch.checked.quarantined), len(batch.checked.dropped)) == (3, 2)
    assert batch.checked.failures["heartbeat_plausible"] == 3
    assert batch.checked.failures["not_from_the_future"] == 2


def test_a_rule_fails_on_a_missing_value_and_holds_at_its_bounds():
    assert failed_rules(recording(heartbeat=20), NOW) == []
    assert failed_rules(recording(heartbeat=250.0), NOW) == []
    assert failed_rules(recording(heartbeat=19.9), NOW) == ["heartbeat_plausible"]
    assert failed_rules(recording(heartbeat=None), NOW) == ["heartbeat_plausible"]
    assert failed_rules(recording(device_id=10), NOW) == ["device_known"]
    assert failed_rules(recording(device_id=None), NOW) == ["device_known"]
    assert failed_rules(recording(time=NOW), NOW) == []
    assert failed_rules(recording(time=NOW + 1), NOW) == ["not_from_the_future"]
    assert failed_rules(recording(time=None), NOW) == ["not_from_the_future"]
    assert failed_rules(recording(time=time.time() + 3600)) == ["not_from_the_future"]  # now by default


def test_the_strongest_action_wins_and_rules_are_listed_in_config_order():
    everything_wrong = recording(heartbeat=900.0, device_id=11, time=FAR_FUTURE_EPOCH)
    assert failed_rules(everything_wrong, NOW) == ["heartbeat_plausible", "device_known", "not_from_the_future"]
    assert action_on(everything_wrong, NOW) == "quarantine"
    assert action_on(recording(device_id=11, time=FAR_FUTURE_EPOCH), NOW) == "drop"
    assert action_on(recording(device_id=11), NOW) == "warn"
    assert action_on(recording(), NOW) is None
    checked = check([recording(recording_id="a", device_id=11), recording(recording_id="b")], NOW)
    assert [row["recording_id"] for row in checked.kept] == ["a", "b"]  # warned rows are kept
    assert checked.warnings == {"device_known": 1}


def test_the_model_declares_the_same_rules_in_the_same_order_with_the_same_actions():
    model = (REPO_ROOT / "models" / "silver" / "silver_recordings.sql").read_text()
    declared = re.findall(
        r"\{'name': '(\w+)', 'expression': '([^']+)',\s*'action': '(\w+)'\}", model
    )
    assert [(name, action) for name, _, action in declared] == [(rule.name, rule.action) for rule in RULES]
    expressions = {name: expression for name, expression, _ in declared}
    assert expressions["heartbeat_plausible"] == (
        f"heartbeat between {recording_rules.LOWEST_PLAUSIBLE_HEARTBEAT} and "
        f"{recording_rules.HIGHEST_PLAUSIBLE_HEARTBEAT}"
    )


def test_known_devices_are_the_seeds():
    seed = (REPO_ROOT / "seeds" / "devices.csv").read_text().splitlines()[1:]
    assert recording_rules.REGISTERED_DEVICES == {int(line.split(",")[0]) for line in seed}
    assert {10, 11}.isdisjoint(recording_rules.REGISTERED_DEVICES)
