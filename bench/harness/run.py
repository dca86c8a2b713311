"""A benchmark run: its record (when, which command, the machine's load at start and end), its
timed steps, each result kept as JSON, and the closing line of its total time."""

from __future__ import annotations

import json
import shlex
import sys
import time
from datetime import datetime, timezone
from typing import Callable, TypeVar

from bench.harness.child_process import child_result
from bench.harness.fresh_lakehouse import empty_folder
from bench.harness.machine import load_average
from bench.harness.stats import minutes_and_seconds

T = TypeVar("T")


def command_line(prog: str, argv: list[str] | None) -> str:
    """The command as typed: `prog` and the arguments (sys.argv's when `argv` is None)."""
    return prog + " " + shlex.join(argv if argv is not None else sys.argv[1:])


def total_line(started: float) -> str:
    """`total wall time <m>m<s>s, load average at the end <load>`, from time.monotonic() `started`."""
    return (f"total wall time {minutes_and_seconds(time.monotonic() - started)}, load average at the end "
            f"{load_average()}")


class Run:
    """A run's record, which its result and its doc section carry: started_at, command,
    load_start and `record`'s own keys; `end()` adds duration_min and load_end."""

    def __init__(self, command: str, **record) -> None:
        self.started = time.monotonic()
        self.record = {"started_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M"),
                       "command": command, "load_start": load_average(), **record}

    def end(self) -> dict:
        self.record["duration_min"] = (time.monotonic() - self.started) / 60
        self.record["load_end"] = load_average()
        return self.record

    def total_line(self) -> str:
        return total_line(self.started)


class Steps:
    """The steps of a run that measures in child processes: their logs in .lakehouse/bench/logs/,
    each step's result in .lakehouse/bench/results/<name>.json (both emptied first)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.logs, self.results = empty_folder("logs"), empty_folder("results")
        print(f"{prefix}: logs in {self.logs}", flush=True)

    def run(self, name: str, measure: Callable[[], T]) -> T:
        started = time.monotonic()
        print(f"{self.prefix}: {name} ...", flush=True)
        result = measure()
        (self.results / f"{name}.json").write_text(json.dumps(result, indent=1))
        print(f"{self.prefix}: {name} done in {(time.monotonic() - started) / 60:.1f} min", flush=True)
        return result

    def child(self, module_args: list[str], log: str, result: str):
        """`python -m <module> ...`'s JSON result; its output in logs/<log>.log, the result in
        results/<result>.json."""
        return child_result(module_args, self.logs / f"{log}.log", self.results / f"{result}.json")
