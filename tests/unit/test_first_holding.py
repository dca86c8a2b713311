"""The latency benchmarks' earliest commit holding a landing (bench/latency/gold_commits.py):
bisecting the commits' running maximum gives what scanning every commit gave."""

from __future__ import annotations

import pytest

from bench.latency.gold_commits import Commit, FirstHolding


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
