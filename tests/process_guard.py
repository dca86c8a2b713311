"""Keeps the in-process tiers in one process: a test there that starts one fails at once, naming
the tier a test that needs a process of its own belongs in (tests/processes/)."""

from __future__ import annotations

import subprocess
from typing import Sequence

REFUSED = ("{tier} runs in one process; a test that starts a process belongs in tests/processes/ "
           "(started here: {command})")


def refuse_processes(monkeypatch, tier: str, allowed: Sequence[str] = ()) -> None:
    """For the test at hand: subprocess.Popen fails unless its program's path holds one of
    `allowed`."""
    start = subprocess.Popen.__init__

    def refuse(self, args, *more, **options):
        command = [args] if isinstance(args, (str, bytes)) else list(args)
        if not any(name in str(command[0]) for name in allowed):
            raise AssertionError(REFUSED.format(tier=tier, command=" ".join(map(str, command))[:200]))
        start(self, args, *more, **options)

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
