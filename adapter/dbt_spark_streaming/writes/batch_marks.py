"""Which streaming query and micro-batch a Delta commit holds, read from the commit file alone.

Two records, read alike: Delta's transaction action (`txn`: appId, version), written by Delta's
streaming sink and by statements run under txnAppId/txnVersion (MERGE in update mode); and the
mark appends put in the commit's userMetadata (idempotent_batches.appending_once). No Spark here:
the chaos harness and the latency benchmark read commit files from processes without one.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

# The transaction ids of one-time backfills (writes/backfill.py): no batch of any stream, passed
# over like other commits, so a replayed batch is still found behind one.
from dbt_spark_streaming.config.backfills import BACKFILL_APP_ID_PREFIX

_MARK_PREFIX = '{"streaming_query"'


def batch_mark(app_id: str, batch_id: int) -> str:
    """The userMetadata of a commit that holds the batch (DESCRIBE HISTORY shows it)."""
    return json.dumps({"streaming_query": app_id, "batch": batch_id})


def recorded_batch(commit: str) -> tuple[str, int] | None:
    """(query id, batch id) that a commit file's JSON lines record, None for other commits."""
    return recorded_batch_in(json.loads(line) for line in commit.splitlines())


def recorded_batch_in(actions: Iterable[Mapping[str, Any]]) -> tuple[str, int] | None:
    """The same, from a commit's actions already parsed."""
    for action in actions:
        if "txn" in action and not action["txn"]["appId"].startswith(BACKFILL_APP_ID_PREFIX):
            return action["txn"]["appId"], int(action["txn"]["version"])
        user_metadata = action.get("commitInfo", {}).get("userMetadata")
        if user_metadata and user_metadata.startswith(_MARK_PREFIX):
            mark = json.loads(user_metadata)
            return mark["streaming_query"], int(mark["batch"])
    return None
