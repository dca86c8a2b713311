"""Where a model's stream stood when the process died, read from its checkpoint and Delta log.

A micro-batch goes: offsets/<b> written (the plan), data committed to Delta recording the query
and batch (batch_marks.py: the checkpoint's query id and b), then commits/<b> written (done).
A kill between the last two is the moment exactly-once hinges on: on restart the batch is
planned again and the write must recognise it as already written.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from dbt_spark_streaming.writes.batch_marks import recorded_batch_in
from python_runners.testing import delta_log

NOT_STARTED = "not started"
BETWEEN_BATCHES = "between batches"
MID_BATCH = "mid-batch, before its Delta commit"
COMMITTED_NOT_CHECKPOINTED = "after its Delta commit, before the checkpoint's commit"


@dataclass(frozen=True)
class ModelPaths:
    model: str
    table: str  # schema.table
    table_path: Path
    checkpoint: Path


def latest_delta_version(paths: ModelPaths) -> int:
    return delta_log.latest_version(paths.table_path)


def stream_state(paths: ModelPaths) -> tuple[str, int | None]:
    """The state and the batch it concerns (None when there is no batch in flight)."""
    planned = max(_numbered(paths.checkpoint / "offsets"), default=None)
    if planned is None:
        return NOT_STARTED, None
    done = max(_numbered(paths.checkpoint / "commits"), default=-1)
    if done >= planned:
        return BETWEEN_BATCHES, None
    if _delta_has_batch(paths, _query_id(paths.checkpoint), planned):
        return COMMITTED_NOT_CHECKPOINTED, planned
    return MID_BATCH, planned


def _query_id(checkpoint: Path) -> str:
    with open(checkpoint / "metadata", encoding="utf-8") as metadata:
        return json.load(metadata)["id"]


def _delta_has_batch(paths: ModelPaths, query_id: str, batch: int, look_back: int = 20) -> bool:
    for commit in reversed(delta_log.commit_files(paths.table_path)[-look_back:]):
        recorded = recorded_batch_in(commit.actions())
        if recorded is not None:
            return recorded[0] == query_id and recorded[1] >= batch
    return False


def _numbered(folder: Path) -> list[int]:
    try:
        return [int(name) for name in os.listdir(folder) if name.isdigit()]
    except FileNotFoundError:
        return []
