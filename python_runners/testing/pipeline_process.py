"""The pipeline (`dbt <args>`) as a separate process tree that can be killed without warning."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Mapping, Sequence

from python_runners import REPO_ROOT
from python_runners.testing import delta_log
from python_runners.testing.dbt_process import dbt_command
from python_runners.testing.logged_process import LoggedProcess


class PipelineProcess(LoggedProcess):
    """`dbt <args>` on a project (the repository's by default), output to a log file, dbt's target
    beside it, in a process group of its own."""

    def __init__(
        self, args: Sequence[str], env: Mapping[str, str], log_path: Path,
        project_dir: Path = REPO_ROOT,
    ):
        super().__init__(dbt_command(args, log_path.parent / "target", project_dir), env, log_path)

    def kill_on_delta_commit(self, table: Path, after_version: int, timeout: float) -> None:
        """SIGKILL the tree the moment `table` has a version later than `after_version` (polled
        every 5 ms), i.e. right after the run's write committed, before what follows it."""
        deadline = time.monotonic() + timeout
        while delta_log.latest_version(table) <= after_version:
            if self.has_exited():
                raise RuntimeError(f"the run ended before it could be killed:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"no Delta commit to {table} within {timeout} s:\n{self.log_tail()}")
            time.sleep(0.005)
        self.kill_tree()
