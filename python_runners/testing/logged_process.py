"""A command as a process tree of its own, its output in a log file: waited on, read, killed.

dbt and the service start a JVM (pyspark's gateway) that joins the command's process group, so
killing the group takes down the whole tree without warning, as a crash would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable, Mapping, Sequence


class ProcessExited(RuntimeError):
    """The process ended before what was waited for."""


class LoggedProcess:
    """`timeout`: how long a wait_for may take when the call gives no limit (None: no limit)."""

    def __init__(
        self, command: Sequence[str], env: Mapping[str, str], log_path: Path, cwd: Path | None = None,
        timeout: float | None = None,
    ):
        self.log_path, self.timeout = log_path, timeout
        self.started = time.monotonic()
        with open(log_path, "w", encoding="utf-8") as log:
            self.process = subprocess.Popen(
                list(command), env=dict(env), stdout=log, stderr=subprocess.STDOUT, cwd=cwd,
                start_new_session=True,  # the JVM that pyspark launches joins this group
            )

    @property
    def seconds_running(self) -> float:
        return time.monotonic() - self.started

    def has_exited(self) -> bool:
        return self.process.poll() is not None

    def wait(self, timeout: float) -> int:
        return self.process.wait(timeout=timeout)

    def output(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def log_contains(self, text: str) -> bool:
        return text in self.output()

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.output().splitlines()[-lines:])

    def wait_for(
        self, what: str, condition: Callable[[], bool], timeout: float | None = None,
        interval: float = 0.2,
    ) -> None:
        """Until `condition()` holds; ProcessExited if the process ends first, TimeoutError after
        `timeout` seconds (None: self.timeout). Both say the end of the log."""
        timeout = self.timeout if timeout is None else timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        while not condition():
            if self.has_exited():
                raise ProcessExited(f"the process exited before {what}:\n{self.log_tail(60)}")
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"no {what} within {timeout} s:\n{self.log_tail(60)}")
            time.sleep(interval)

    def wait_for_log(self, text: str, timeout: float | None = None, interval: float = 0.2) -> None:
        self.wait_for(repr(text), lambda: self.log_contains(text), timeout, interval)

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

    def kill_if_running(self) -> None:
        if not self.has_exited():
            self.kill_tree()


def _members(group: int) -> list[int]:
    return [pid for pid, fields in group_stats(group) if fields[0] != "Z"]


def group_stats(group: int) -> list[tuple[int, list[str]]]:
    """Each process of the group with its /proc/<pid>/stat fields from the state on (state,
    ppid, pgrp, ..., utime at 11, stime at 12)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group:
            found.append((int(entry), fields))
    return found
