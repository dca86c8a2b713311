"""When to kill: a random delay after start, the instant a model's Delta table gets a commit, or
the instant the service's maintenance commits to any of them (a compaction's OPTIMIZE, or a
VACUUM's START, after which it deletes files)."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Optional, Sequence

from python_runners.testing.logged_process import ProcessExited
from python_runners.testing.pipeline_process import PipelineProcess
from python_runners.testing import delta_log
from python_runners.testing.chaos.stream_state import ModelPaths, latest_delta_version

POLL_SECONDS = 0.001
# A kill on a commit waits this long for one after the model starts (dbt runs the models one at a
# time, each catching up before the next starts, and a cdc_table's batch takes a while on 2
# cores: the last models start minutes into a run), and at most RUN_WAIT_SECONDS in all.
COMMIT_WAIT_SECONDS = 240
RUN_WAIT_SECONDS = 600
STREAMING_STARTED = "START sql streaming_table model"  # dbt's line as the first model starts
MAINTENANCE_OPERATIONS = ("OPTIMIZE", "VACUUM START")
MAINTENANCE_POLL_SECONDS = 0.01


@dataclass(frozen=True)
class KillMoment:
    description: str
    delay_seconds: float = 0.0  # a random moment...
    from_streaming: bool = False  # ...counted from the first model's start instead of the process's
    after_commit_to: ModelPaths | None = None  # or: the moment a new Delta commit appears
    during_maintenance_of: tuple[ModelPaths, ...] = ()  # or: a maintenance commit to any of them

    @property
    def needs_serving(self) -> bool:
        """Only a served run (on_new_data) maintains its tables."""
        return bool(self.during_maintenance_of)

    def wait(self, pipeline: PipelineProcess) -> Optional[str]:
        """Return at the moment to kill; raises ProcessExited if the pipeline ends first (in
        always-on mode that is a failure). Returns the maintenance caught, if it waited for one."""
        if self.during_maintenance_of:
            return _wait_for_maintenance(pipeline, self.during_maintenance_of)
        if self.after_commit_to is not None:
            _wait_for_new_commit(pipeline, self.after_commit_to)
            return None
        started = 0.0
        if self.from_streaming:
            pipeline.wait_for_log(STREAMING_STARTED, interval=0.1)
            started = pipeline.seconds_running
        delay = started + self.delay_seconds
        pipeline.wait_for(f"{delay} s", lambda: pipeline.seconds_running >= delay, interval=0.05)
        return None


def plan(kills: int, seed: int, targets: Sequence[ModelPaths], max_delay: float,
         maintenance_kills: int = 0, maintained: Sequence[ModelPaths] = ()) -> list[KillMoment]:
    """`maintenance_kills` kills on a maintenance commit to any of `maintained`; the others in
    thirds: at any moment of a run (start-up included), at a random moment once models are
    streaming, and on Delta commits, rotating over the target models. Shuffled by the seed."""
    rng = random.Random(seed)
    moments = [KillMoment("on the service's maintenance", during_maintenance_of=tuple(maintained))
               for _ in range(maintenance_kills)]
    for number in range(kills - maintenance_kills):
        kind = number % 3
        if kind == 0:
            target = targets[(number // 3) % len(targets)]
            moments.append(KillMoment(f"on a Delta commit to {target.table}", after_commit_to=target))
        elif kind == 1:
            delay = round(rng.uniform(0.0, max_delay / 2), 1)
            moments.append(KillMoment(f"{delay} s into streaming", delay, from_streaming=True))
        else:
            delay = round(rng.uniform(1.0, max_delay), 1)
            moments.append(KillMoment(f"{delay} s after start", delay))
    rng.shuffle(moments)
    return moments


def _wait_for_new_commit(pipeline: PipelineProcess, target: ModelPaths) -> None:
    """Version 0 is the table's creation; a batch of data comes with a later version."""
    baseline = max(latest_delta_version(target), 0)
    started = f" model {target.table} ."  # dbt's START line for the model (its OK line too)
    started_at = None
    polls = 0
    while latest_delta_version(target) <= baseline:
        polls += 1
        if polls % 100 == 0:
            if pipeline.has_exited():
                raise ProcessExited(f"the pipeline exited before a new commit to {target.table}")
            if started_at is None and pipeline.log_contains(started):
                started_at = pipeline.seconds_running
            waited = 0.0 if started_at is None else pipeline.seconds_running - started_at
            if waited > COMMIT_WAIT_SECONDS or pipeline.seconds_running > RUN_WAIT_SECONDS:
                return  # no commit came: kill anyway, the outcome is logged as it is
        time.sleep(POLL_SECONDS)


def _wait_for_maintenance(pipeline: PipelineProcess, tables: Sequence[ModelPaths]) -> Optional[str]:
    """Until a table's newest commit is a compaction or a VACUUM's start ("<operation> of
    <table>"); None if none came within RUN_WAIT_SECONDS (the kill comes all the same)."""
    seen = {paths.table: latest_delta_version(paths) for paths in tables}
    polls = 0
    while pipeline.seconds_running <= RUN_WAIT_SECONDS:
        for paths in tables:
            version = latest_delta_version(paths)
            if version > seen[paths.table]:
                seen[paths.table] = version
                operation = delta_log.last_operation(paths.table_path)
                if operation in MAINTENANCE_OPERATIONS:
                    return f"{operation} of {paths.table}"
        polls += 1
        if polls % 100 == 0 and pipeline.has_exited():
            raise ProcessExited("the pipeline exited before its service maintained a table")
        time.sleep(MAINTENANCE_POLL_SECONDS)
    return None
