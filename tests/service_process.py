"""The always-on service (`python -m python_runners service start`) as a process of its own."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

from python_runners.runtime.lakehouse import REPO_ROOT


class ServiceProcess:
    def __init__(self, start_args: Sequence[str], env: Mapping[str, str], log: Path, timeout: float):
        self.env, self.log, self.timeout = dict(env), log, timeout
        with open(log, "w", encoding="utf-8") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "python_runners", "service", "start", *start_args],
                env=self.env, stdout=out, stderr=subprocess.STDOUT, cwd=REPO_ROOT,
            )

    def command(self, action: str) -> subprocess.CompletedProcess:
        """`service status` or `service stop`, from another process."""
        return subprocess.run([sys.executable, "-m", "python_runners", "service", action], env=self.env,
                              capture_output=True, text=True, timeout=self.timeout, cwd=REPO_ROOT)

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_for(self, what: str, condition: Callable[[], bool], interval: float = 0.2) -> None:
        deadline = time.monotonic() + self.timeout
        while not condition():
            assert self.process.poll() is None, f"the service exited before {what}:\n{self.output()[-4000:]}"
            assert time.monotonic() < deadline, f"no {what} within {self.timeout} s:\n{self.output()[-4000:]}"
            time.sleep(interval)

    def kill_if_running(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
