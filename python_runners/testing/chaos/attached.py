"""Attached runs in the chaos run: a run that attaches to a warm driver started for it
(`dbt-spark-streaming driver start`). The kill takes down the client's process tree only: its
queries run in the driver's JVM, which must stop them, release the client and serve on. The next
run, whichever it is, resumes from the checkpoints that the driver's batches left."""

from __future__ import annotations

import time
from typing import Mapping

from dbt_spark_streaming.commands.driver import ask_status
from dbt_spark_streaming.driver import driver_file
from dbt_spark_streaming.driver.attach import ATTACHED_SAID, REFUSED_SAID
from dbt_spark_streaming.lakehouse import Lakehouse
from python_runners.testing.logged_process import LoggedProcess
from python_runners.testing.warm_driver import run_driver

RELEASE_SECONDS = 60  # a bound for a driver that never releases its killed client


class AttachedRunFailed(RuntimeError):
    pass


class ChaosDriver:
    """A warm driver on the chaos run's lakehouse, started for one run and stopped after it."""

    def __init__(self, env: Mapping[str, str], lakehouse: Lakehouse):
        self.env, self.lakehouse = dict(env), lakehouse

    def start(self) -> None:
        started = run_driver("start", self.env)
        if started.returncode != 0:
            raise AttachedRunFailed(f"the warm driver did not start:\n{started.stdout}{started.stderr}")

    def after_kill(self, client: LoggedProcess) -> str:
        """How the killed client stood; raises if it did not attach or the driver did not outlive it."""
        output = client.output()
        if REFUSED_SAID in output:
            raise AttachedRunFailed(f"the run did not attach: {_line_with(output, REFUSED_SAID)}")
        record = driver_file.read(self.lakehouse.local)
        if record is None:
            raise AttachedRunFailed("the warm driver died with its killed client")
        deadline = time.monotonic() + RELEASE_SECONDS
        while (asked := ask_status(record)) is None or asked["clients"]:
            if time.monotonic() > deadline:
                raise AttachedRunFailed(f"the warm driver did not release its killed client within "
                                        f"{RELEASE_SECONDS} s: {asked}")
            time.sleep(0.1)
        if ATTACHED_SAID not in output:
            return "killed before it attached; the warm driver serves on"
        return "attached; the warm driver released it and serves on"

    def stop(self) -> None:
        stopped = run_driver("stop", self.env)
        if stopped.returncode != 0:
            raise AttachedRunFailed(f"the warm driver did not stop:\n{stopped.stdout}{stopped.stderr}")

    def close(self) -> None:
        """Stopped if still running, as the chaos run ends early; no error of its own."""
        run_driver("stop", self.env)


def _line_with(output: str, text: str) -> str:
    return next(line for line in output.splitlines() if text in line)
