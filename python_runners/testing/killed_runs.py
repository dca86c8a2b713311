"""`dbt run` as processes on a lakehouse of their own, SIGKILLed at the moment a test names.

The tests that kill real runs (tests/processes/kill/, the Kafka source's) share this: one
project, one lakehouse apart from the suite's (a Derby metastore admits one JVM), runs started by
name with their logs beside the test's files, and a kill on a table's next Delta commit, the
moment that matters for exactly-once (the write committed, the checkpoint not yet).
"""

from __future__ import annotations

from pathlib import Path

from dbt_spark_streaming.lakehouse import Lakehouse
from python_runners.testing import delta_log
from python_runners.testing.pipeline_process import PipelineProcess
from python_runners.testing.separate_lakehouse import separate_lakehouse_env

RUN_TIMEOUT = 600


class KilledRuns:
    """Runs of the project at `project` in the schema `schema`, on a lakehouse under `folder`;
    `timeout`: how long a run or a wait for its commit may take."""

    def __init__(self, project: Path, schema: str, folder: Path, timeout: float = RUN_TIMEOUT, **env: str):
        self.project = project
        self.schema = schema
        self.folder = folder
        self.timeout = timeout
        self.env = separate_lakehouse_env(folder / "lakehouse", **env)
        self.lakehouse = Lakehouse.from_env(self.env)

    def table(self, model: str) -> Path:
        return Path(self.lakehouse.warehouse) / f"{self.schema}.db" / model

    def landing(self, path: str) -> Path:
        return Path(self.lakehouse.landing_path(path))

    def start(self, name: str, *args: str) -> PipelineProcess:
        """`dbt run <args>`, its log `<name>.log`."""
        return PipelineProcess(["run", *args], self.env, self.folder / f"{name}.log", project_dir=self.project)

    def run(self, name: str, *args: str) -> PipelineProcess:
        """A run to its end, which must succeed."""
        run = self.start(name, *args)
        assert run.wait(self.timeout) == 0, run.log_tail()
        return run

    def killed_on_commit(self, name: str, model: str, *args: str) -> PipelineProcess:
        """A run (`dbt run <args>`) SIGKILLed right after its next Delta commit to `model`'s table."""
        table = self.table(model)
        run = self.start(name, *args)
        run.kill_on_delta_commit(table, delta_log.latest_version(table), self.timeout)
        return run
