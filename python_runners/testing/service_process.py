"""The always-on service (`python -m python_runners service start`) as a process of its own."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Mapping, Sequence

from python_runners import REPO_ROOT
from python_runners.testing.command_line import python_runners_command, run_command_line
from python_runners.testing.logged_process import LoggedProcess


class ServiceProcess(LoggedProcess):
    """`timeout` bounds each wait and each `service status|stop` from another process."""

    def __init__(self, start_args: Sequence[str], env: Mapping[str, str], log_path: Path, timeout: float):
        super().__init__(python_runners_command("service", "start", *start_args), env, log_path,
                         cwd=REPO_ROOT, timeout=timeout)
        self.env = dict(env)

    def command(self, action: str) -> subprocess.CompletedProcess:
        """`service status` or `service stop`, from another process."""
        return run_command_line(["service", action], self.env, self.timeout)

    def stop(self, wait_seconds: float) -> int:
        """`service stop` from another process, then up to `wait_seconds` for the service to end,
        after which its tree is killed. The service's exit code (0: it stopped cleanly)."""
        if not self.has_exited():
            self.command("stop")
        try:
            return self.wait(wait_seconds)
        except subprocess.TimeoutExpired:
            self.kill_tree()
            return self.process.returncode
