"""The pipeline as a separate process tree that can be killed without warning."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Mapping, Sequence

from python_runners.runtime.lakehouse import REPO_ROOT

DBT = str(Path(sys.executable).with_name("dbt"))


class PipelineProcess:
    """`dbt <args>` on a project (the repository's by default), output to a log file, in a process
    group of its own."""

    def __init__(
        self, args: Sequence[str], env: Mapping[str, str], log_path: Path,
        project_dir: Path = REPO_ROOT,
    ):
        self.log_path = log_path
        self.started = time.monotonic()
        target = log_path.parent / "target"
        command = [
            DBT, *args, "--project-dir", str(project_dir),
            "--profiles-dir", str(REPO_ROOT / "profiles"),
            "--target-path", str(target), "--log-path", str(target),
        ]
        with open(log_path, "w", encoding="utf-8") as log:
            self.process = subprocess.Popen(
                command, env=dict(env), stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,  # the JVM that pyspark launches joins this group
            )

    @property
    def seconds_running(self) -> float:
        return time.monotonic() - self.started

    def has_exited(self) -> bool:
        return self.process.poll() is not None

    def wait(self, timeout: float) -> int:
        return self.process.wait(timeout=timeout)

    def kill_tree(self) -> None:
        """SIGKILL every process in the group, and wait until none is left (the JVM included)."""
        group = self.process.pid
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        while _members(group):
            time.sleep(0.05)

    def kill_on_delta_commit(self, table: Path, commits_before: int, timeout: float) -> None:
        """SIGKILL the tree the moment `table` has more than `commits_before` commits (polled
        every 5 ms), i.e. right after the run's write committed, before what follows it."""
        deadline = time.monotonic() + timeout
        while delta_commits(table) == commits_before:
            if self.has_exited():
                raise RuntimeError(f"the run ended before it could be killed:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"no Delta commit to {table} within {timeout} s:\n{self.log_tail()}")
            time.sleep(0.005)
        self.kill_tree()

    def log_contains(self, text: str) -> bool:
        return text in self.log_path.read_text(encoding="utf-8", errors="replace")

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])


def delta_commits(table: Path) -> int:
    log = table / "_delta_log"
    return len(list(log.glob("*.json"))) if log.exists() else 0


def _members(group: int) -> list[int]:
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":  # fields: state, ppid, pgrp, ...
            members.append(int(entry))
    return members
