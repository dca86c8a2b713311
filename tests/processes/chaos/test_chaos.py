"""`make chaos` in small: 3 SIGKILLs of the always-on pipeline while data lands (the second of a
run attached to a warm driver, which must serve on), then the audit,
which checks the cdc_tables against the change feed too. (Killing a run on a cdc_table's commit
is tests/processes/kill/test_killed_on_commit.py's; `make chaos` kills there too, its 4th
target: it commits minutes into an always-on run, which would make this test three times as long.)

The chaos run is its own process with its own lakehouse (a Derby metastore admits one JVM at a
time); its last line is the verdict this test reads.
"""

from __future__ import annotations

import re

import pytest

from python_runners.testing.command_line import run_command_line

pytestmark = pytest.mark.chaos
KILL = re.compile(r"^chaos: kill \d+/3 ")
VERDICT = re.compile(
    r"^chaos: kills=(\d+) landed=(\d+) lost=(\d+) duplicated=(\d+) gold_matches_recompute=(yes|no)"
    r" cdc_matches_reference=(yes|no)$"
)


def test_three_kills_lose_and_duplicate_nothing(tmp_path):
    chaos = run_command_line(
        ["chaos", "--kills", "3", "--seed", "7", "--max-delay", "40", "--attached-every", "2", "--lakehouse", str(tmp_path / "chaos")],
        timeout=2400,  # a bound for a stuck run, not a speed target
    )
    report = chaos.stdout + chaos.stderr
    assert chaos.returncode == 0, report
    lines = chaos.stdout.strip().splitlines()
    kills_said = [line for line in lines if KILL.match(line)]
    assert len(kills_said) == 3, report
    assert "attached; the warm driver released it and serves on" in kills_said[1], report  # on a commit
    verdict = VERDICT.match(lines[-1])
    assert verdict, report
    kills, landed, lost, duplicated, gold, cdc = verdict.groups()
    assert (kills, lost, duplicated, gold, cdc) == ("3", "0", "0", "yes", "yes"), report
    assert int(landed) > 0
    assert "chaos: joined: lost=0 duplicated=0" in lines, report  # the stream-stream join too
