"""The always-on service's status file: which queries run, their restarts and last progress.

Per query: its restarts, its last batch (with the batch's expectations' counts, for a model with
expectations) and the expectations' counts summed since the service started.

The service writes it as it starts ("starting"), while dbt catches each model up ("catching up",
naming the model), then every 2 seconds while serving ("serving"), and at the end ("stopped").
Read by `dbt-spark-streaming status` from
any other process (the embedded metastore admits one process, a file does not).
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional

from dbt_spark_streaming.config.expectations import ExpectationCount, ExpectationCounts
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.progress.batch import BatchProgress, iso, last_batch


LIVE_STATES = ("starting", "catching up", "serving")


def status_path(lakehouse: Lakehouse) -> Path:
    return Path(lakehouse.local) / "service" / "status.json"


class StatusFile:
    def __init__(self, lakehouse: Lakehouse):
        self.path = status_path(lakehouse)
        self.started_at = _process_started_at()

    def write(self, queries: Iterable[Any] = (), state: str = "serving",
              model: Optional[str] = None, own_time: Optional[dict] = None,
              latest: Optional[Callable[[str], Optional[BatchProgress]]] = None,
              totals: Optional[Callable[[str], ExpectationCounts]] = None,
              store_requests: Optional[dict[str, int]] = None) -> None:
        """`queries`: serving.ServedQuery and dataflow.ScheduledModel objects; `model`: the one catching up; `own_time`:
        what the service's own code has spent so far (own_time.OwnTime.figures()); `latest`:
        a query name's last batch progress, as the progress listener heard it; `totals`: a
        query name's expectations' counts since the service started (the listener's);
        `store_requests`: what the service's JVM has asked of the lakehouse's object store,
        by kind (jvm/hadoop_fs.store_requests; None on local disk)."""
        status = {
            "pid": os.getpid(),
            "state": state,
            "model": model,
            "started_at": self.started_at,
            "updated_at": _now(),
            "queries": [_query_status(served, latest, totals) for served in queries],
            "own_time": own_time or {},
            "store_requests": store_requests,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        hidden = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        hidden.write_text(json.dumps(status, indent=1))
        os.replace(hidden, self.path)  # readers never see half a file


def read(lakehouse: Lakehouse) -> Optional[dict]:
    path = status_path(lakehouse)
    if not path.exists():
        return None
    status = json.loads(path.read_text())
    if status["state"] in LIVE_STATES and not _alive(status["pid"]):
        status["state"] = "dead"  # killed without a chance to say so
    return status


def _query_status(served: Any, latest: Optional[Callable[[str], Optional[BatchProgress]]],
                  totals: Optional[Callable[[str], ExpectationCounts]] = None) -> dict:
    batch = (latest(served.name) if latest else None)
    if batch is None and getattr(served, "query", None) is not None:
        batch = last_batch(served.query)
    since_start = totals(served.name) if totals else ExpectationCounts()
    lag = getattr(served, "lag", None)
    return {
        "name": served.name,
        "active": served.active,
        "state": served.state,
        # an on_new_data model's (serve/dataflow.py): behind its inputs now, and after its last run
        "lag_seconds": round(lag(), 3) if lag else None,
        "last_run_lag_seconds": getattr(served, "last_lag", None),
        "target_lag_seconds": getattr(served, "target_lag", None),
        "runs": getattr(served, "runs", None),
        # per run: (up-to-date check, start, start to end) seconds, for bench/latency's breakdown
        "run_timings": [[round(t, 4) for t in timing] for timing in getattr(served, "run_timings", ())],
        "restarts": served.restarts,
        "failures_in_a_row": served.failures_in_a_row,
        "last_failure": served.last_failure,
        "last_progress": {
            "batch_id": batch.batch_id,
            "timestamp": iso(batch.timestamp),
            "num_input_rows": batch.input_rows,
            "processed_rows_per_second": batch.processed_rows_per_second,
            "batch_duration_ms": batch.duration_ms,
            "watermark": iso(batch.watermark),
            "expectations": counts_as_json(batch.expectations),
        } if batch else None,
        "expectations_since_start": counts_as_json(since_start),
    }


def counts_as_json(counts: ExpectationCounts) -> Optional[dict]:
    """The counts as the file keeps them; None for a query without expectations."""
    if not counts:
        return None
    return {
        "rows_checked": counts.rows_checked,
        "rows_dropped": counts.rows_dropped,
        "rows_quarantined": counts.rows_quarantined,
        "rules": [
            {"name": rule.name, "action": rule.action, "rows_checked": rule.rows_checked,
             "rows_failed": rule.rows_failed}
            for rule in counts.rules
        ],
    }


def counts_from_json(kept: Optional[Mapping[str, Any]]) -> ExpectationCounts:
    """Back from the file (a file written before expectations existed has none)."""
    if not kept:
        return ExpectationCounts()
    return ExpectationCounts(
        rows_checked=kept.get("rows_checked", 0),
        rows_dropped=kept.get("rows_dropped", 0),
        rows_quarantined=kept.get("rows_quarantined", 0),
        rules=tuple(
            ExpectationCount(rule["name"], rule["action"], rule.get("rows_checked", 0),
                             rule.get("rows_failed", 0))
            for rule in kept.get("rules") or []
        ),
    )


def _alive(pid: int) -> bool:
    """Running (an exited process its parent has not reaped yet counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


_started_at: Optional[str] = None


def _process_started_at() -> str:
    """When this process first wrote its status: the service's start, whoever writes next."""
    global _started_at
    _started_at = _started_at or _now()
    return _started_at


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def wait_until_gone(pid: int, timeout_seconds: float) -> bool:
    deadline = time.monotonic() + timeout_seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not _alive(pid)
