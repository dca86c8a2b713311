"""The in-process tiers' guard (tests/process_guard.py): a process started there fails at once."""

from __future__ import annotations

import subprocess
import sys

import pytest

from process_guard import refuse_processes


def test_a_process_started_in_the_unit_tier_fails_naming_where_it_belongs():
    with pytest.raises(AssertionError, match=r"tests/unit runs in one process.*tests/processes/.*true"):
        subprocess.run(["true"])


def test_an_allowed_program_still_starts(monkeypatch):
    monkeypatch.undo()  # the unit tier's own guard, which allows nothing
    refuse_processes(monkeypatch, "tests/session", allowed=("python",))

    with pytest.raises(AssertionError, match="tests/session runs in one process"):
        subprocess.run(["true"])
    assert subprocess.run([sys.executable, "-c", "pass"]).returncode == 0
