"""The latency benchmarks' earliest commit holding a landing (bench/latency/gold_commits.py):
bisecting the commits' running maximum gives what scanning every commit gave."""

from __future__ import annotations

import json

import pytest

from bench.latency.gold_commits import Commit, CommitKeeper, FirstHolding


def scanned(found: list[Commit], value: float) -> Commit:
    return min((c for c in found if c.holds(value)), key=lambda c: c.version)


def test_the_first_commit_by_version_whose_files_reach_the_value():
    found = [Commit(3, 13.0, 1005), Commit(0, 10.0, None), Commit(1, 11.0, 999), Commit(2, 12.0, 1002),
             Commit(4, 14.0, 1001), Commit(5, 15.0, None), Commit(6, 16.0, 1010)]
    first = FirstHolding(found)

    for value in range(990, 1011):
        assert first(value) == scanned(found, value)
    assert first(1003).version == 3 and first(1006).version == 6


def test_a_value_no_commit_reaches():
    with pytest.raises(ValueError, match="no commit holds 7"):
        FirstHolding([Commit(0, 1.0, 5), Commit(1, 2.0, None)])(7)


def test_the_keeper_keeps_commits_the_log_no_longer_has(tmp_path):
    log = tmp_path / "gold" / "_delta_log"
    log.mkdir(parents=True)

    def commit(version: int, device_id: int) -> None:
        stats = json.dumps({"maxValues": {"device_id": device_id}})
        (log / f"{version:020d}.json").write_text(json.dumps({"add": {"path": f"{version}.parquet", "stats": stats}}) + "\n")

    keeper = CommitKeeper(str(tmp_path / "gold"), "device_id")
    commit(0, 10)
    commit(1, 11)
    assert [c.version for c in keeper.keep()] == [0, 1]
    (log / f"{0:020d}.json").unlink()  # trimmed by maintenance
    commit(2, 12)
    kept = keeper.keep()
    assert [c.version for c in kept] == [0, 1, 2]
    assert FirstHolding(kept)(10).version == 0
