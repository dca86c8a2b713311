"""Part 3 of `make bench`: landing to visible in gold, with the always-on service (on_new_data by default).

The service runs in its own process (`python -m python_runners service start`) over the demo's
recordings path to one gold table: bronze_recordings -> silver_recordings -> device_counts. This
process (no Spark in it) lands one small file at a steady pace; file i holds recordings of a
device no file before it had, device 1000 + i, so the first gold commit whose files' statistics
reach that device id is the moment file i became visible in gold. The time from the file's
rename into the landing folder to that commit file's mtime is its latency.

The same statistics in bronze's and silver's commits time each hop; each commit's micro-batch
(adapter/dbt_spark_streaming/writes/batch_marks.py) and that batch's progress (bench/latency/breakdown.py) split a hop into the
wait before the batch started and the batch's own phases. The service's status file adds the
time its own code took (listener, progress flush, status file).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from bench.harness.child_process import child_result, run_child
from bench.harness.fresh_lakehouse import empty_folder
from bench.harness.stats import medians
from bench.latency.gold_commits import Commit, CommitKeeper, FirstHolding, commits
from bench.latency.idle_cpu import idle_cpu_pct
from python_runners.demo.data import FIRST_BATCH_EPOCH, RECORDINGS_FOLDER, STATUS_FOLDER
from dbt_spark_streaming.progress import status_file as service_status
from dbt_spark_streaming.serve.progress_keeper import FLUSH_SECONDS
from dbt_spark_streaming.lakehouse import Lakehouse
from python_runners.testing.dbt_process import dbt_command
from python_runners.testing.lakehouse_store import LakehouseStore
from python_runners.testing.landing import land_json_lines
from python_runners.testing.separate_lakehouse import separate_lakehouse_env
from python_runners.testing.service_process import ServiceProcess

HOPS = (("bronze_recordings", "bronze.db"), ("silver_recordings", "silver.db"), ("device_counts", "gold.db"))
MODELS = tuple(model for model, _schema in HOPS)
FIRST_DEVICE = 1000
RECORDS_PER_FILE = 10
READY_TIMEOUT_S = 600
VISIBLE_TIMEOUT_S = 300
STOP_TIMEOUT_S = 300  # `service stop` from another process
# After every served model caught up: the last status write, the listener, and the progress
# table's last append of the landings' batches (and the maintenance it may start), which is
# the landings' cost, not waiting's.
IDLE_SETTLE_S = FLUSH_SECONDS + 5
CAUGHT_UP_TIMEOUT_S = 300


@dataclass(frozen=True)
class Landing:
    device_id: int
    landed_at: float


def measure_latency(trigger: str, landings: int, interval_s: float, log_dir: Path,
                    all_models: bool = False, idle_seconds: float = 0,
                    after_landing: Callable[[ServiceProcess, int], None] | None = None,
                    before_stop: Callable[[ServiceProcess], None] | None = None,
                    service_args: Sequence[str] = (), store: str = "local", name: str | None = None) -> dict:
    """With `all_models`, every model of the demo serves (nine queries); else the three of MODELS.
    With `idle_seconds`, the service's CPU share over that long with nothing landing, measured
    once every served model has caught up, and on an object store the requests it made of it
    meanwhile, per minute. `after_landing` is called with the service and the
    number of files landed so far after each landing, `before_stop` once the last landing is in
    gold (and after the idle spell), while the service still runs (the soak's memory samples).
    `store`: where the lakehouse lives (python_runners/testing/lakehouse_store.py)."""
    name = name or ("latency_all_models" if all_models else "latency")
    root = empty_folder(name)
    lakehouse_store = LakehouseStore(store, root)
    try:
        return _measure(lakehouse_store, root, name, trigger, landings, interval_s, log_dir, all_models,
                        idle_seconds, after_landing, before_stop, service_args)
    finally:
        lakehouse_store.stop()


def _measure(store: LakehouseStore, root: Path, name: str, trigger: str, landings: int, interval_s: float,
             log_dir: Path, all_models: bool, idle_seconds: float,
             after_landing: Callable[[ServiceProcess, int], None] | None,
             before_stop: Callable[[ServiceProcess], None] | None, service_args: Sequence[str]) -> dict:
    env = separate_lakehouse_env(root, **store.env())
    lakehouse = Lakehouse.from_env(env)
    gold = str(store.view(f"{lakehouse.warehouse}/gold.db/device_counts"))
    landing_location = lakehouse.landing_path(RECORDINGS_FOLDER)
    landing = store.landing(landing_location)
    landing.mkdir(parents=True)
    store.make_folder(lakehouse.landing_path(STATUS_FOLDER))  # the other source, kept empty

    run_child(dbt_command(["seed", "--select", "devices"], log_dir / f"{name}_target"), env,
              log_dir / f"{name}_seed.log")
    land(landing, FIRST_DEVICE - 1)  # the service's first catch-up creates the tables with it
    store.upload_landed([landing_location])

    selection = [] if all_models else ["--select", *MODELS]
    service = ServiceProcess(["--trigger", trigger, *selection, *service_args], env, log_dir / f"{name}_service.log",
                             timeout=STOP_TIMEOUT_S)
    keepers = {model: CommitKeeper(str(store.view(f"{lakehouse.warehouse}/{schema}/{model}")), "device_id")
               for model, schema in HOPS}

    def landed_one(count: int) -> None:
        store.upload_landed([landing_location])
        for keeper in keepers.values():
            keeper.keep()
        if after_landing is not None:
            after_landing(service, count)

    try:
        wait_until_serving(lakehouse, gold, service, None if all_models else len(MODELS))
        landed = land_at_steady_pace(landing, landings, interval_s, landed_one)
        wait_until_visible(gold, landed[-1].device_id, service)
        visible = keepers["device_counts"].keep()
        idle = idle_requests = None
        if idle_seconds:
            wait_until_caught_up(lakehouse)
            before = store_requests(lakehouse)
            idle = idle_cpu_pct(service, idle_seconds)
            after = store_requests(lakehouse)
            if before and after:
                idle_requests = {kind: (after[kind] - before[kind]) * 60 / idle_seconds for kind in after}
        if before_stop:
            before_stop(service)
    finally:
        service.stop(wait_seconds=120)
    first_in_gold = FirstHolding(visible)
    latencies_ms = [(first_in_gold(landing_.device_id).visible_at - landing_.landed_at) * 1000
                    for landing_ in landed]
    # The progress table's batches; on the store the child would need its S3 settings: left out.
    batches = {} if store.store is not None else child_result(
        ["bench.latency.breakdown", "--lakehouse", str(root)],
        log_dir / f"{name}_breakdown.log", log_dir / f"{name}_batches.json", env)
    status = service_status.read(lakehouse)
    return {
        "trigger": trigger, "landings": landings, "interval_s": interval_s,
        "warehouse": lakehouse.warehouse,
        "models": "all" if all_models else list(MODELS), "latencies_ms": latencies_ms,
        "gold_commits": len([c for c in visible if c.holds(FIRST_DEVICE)]),
        "hops": hop_timings({model: keeper.keep() for model, keeper in keepers.items()}, landed, batches),
        "phases": {query: batch_phases(found) for query, found in batches.items()},
        "own_time": status.get("own_time", {}),
        "batches": {query: len(found) for query, found in batches.items()},
        "runs": run_timings(status),
        "queries": len(status.get("queries", [])),
        "idle_cpu_pct": idle,
        "idle_store_requests_per_min": idle_requests,
        "store": store.kind,
        "idle_seconds": idle_seconds,
    }


def run_timings(status: dict) -> dict:
    """Per query the scheduler ran (on_new_data): runs, and the median ms of each part of a run."""
    timings = {}
    for query in status.get("queries", []):
        runs = query.get("run_timings") or []
        if runs:
            timings[query["name"]] = {"runs": query.get("runs", len(runs)), **medians(
                ({"check": c * 1000, "start": s * 1000, "run": r * 1000} for c, s, r in runs),
                ("check", "start", "run"), missing=0)}
    return timings


def hop_timings(kept: dict[str, list[Commit]], landed: list[Landing], batches: dict[str, list[dict]]) -> list[dict]:
    """Per landing and hop: from the row being visible upstream to its table's commit holding it,
    split into the wait before the micro-batch that took it and that batch's own duration.
    `kept`: each hop's commits, kept as they came (CommitKeeper)."""
    timings = []
    upstream = {landing_.device_id: landing_.landed_at for landing_ in landed}
    for model, _schema in HOPS:
        first_holding = FirstHolding(kept[model])
        durations = {
            batch["batch_id"]: batch["duration_ms"].get("triggerExecution", 0)
            for query, query_batches in batches.items() if query.split(".")[-1] == model
            for batch in query_batches
        }
        visible = {}
        for device_id, since in upstream.items():
            commit = first_holding(device_id)
            batch_ms = durations.get(commit.batch_id, 0)
            hop_ms = (commit.visible_at - since) * 1000
            timings.append({"model": model, "device_id": device_id, "hop_ms": hop_ms,
                            "batch_ms": batch_ms, "wait_ms": max(0.0, hop_ms - batch_ms)})
            visible[device_id] = commit.visible_at
        upstream = visible
    return timings


def batch_phases(found: list[dict]) -> dict[str, float]:
    """Median milliseconds of each durationMs phase over the batches that read rows."""
    with_rows = [batch for batch in found if batch["input_rows"] > 0] or found
    phases = sorted({phase for batch in with_rows for phase in batch["duration_ms"]})
    return medians((batch["duration_ms"] for batch in with_rows), phases, missing=0)


def land(folder: Path, device_id: int) -> float:
    time_s = FIRST_BATCH_EPOCH + device_id
    rows = [
        {"recording_id": f"latency-{device_id}-{i}", "device_id": device_id, "mrn": 100_000 + i,
         "time": time_s, "heartbeat": 70.0 + i}
        for i in range(RECORDS_PER_FILE)
    ]
    land_json_lines(folder, f"latency-{device_id:06d}.json", rows)
    return time.time()


def land_at_steady_pace(folder: Path, landings: int, interval_s: float,
                        after_landing: Callable[[int], None] | None = None) -> list[Landing]:
    landed = []
    start = time.monotonic()
    for i in range(landings):
        time.sleep(max(0.0, start + i * interval_s - time.monotonic()))
        device_id = FIRST_DEVICE + i
        landed.append(Landing(device_id, land(folder, device_id)))
        if after_landing:
            after_landing(len(landed))
    return landed


def wait_until_serving(lakehouse: Lakehouse, gold: str, service: ServiceProcess,
                       queries: int | None) -> None:
    """Until gold holds the warm-up file and the service reports serving (`queries` queries, if given)."""
    status_file = service_status.status_path(lakehouse)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if service.has_exited():
            raise RuntimeError(f"the service exited ({service.process.returncode}) before serving; see its log")
        if status_file.exists() and any(c.max_value == FIRST_DEVICE - 1 for c in commits(gold, "device_id")):
            status = json.loads(status_file.read_text())
            if status["state"] == "serving" and queries in (None, len(status["queries"])):
                return
        time.sleep(0.5)
    raise RuntimeError(f"the service was not serving after {READY_TIMEOUT_S} s; see its log")


def store_requests(lakehouse: Lakehouse) -> dict[str, int] | None:
    """What the service has asked of the lakehouse's object store so far, as its status file has
    it (rewritten every 2 s): read right after a rewrite, so that two reads span their interval."""
    path = service_status.status_path(lakehouse)
    written = path.stat().st_mtime
    deadline = time.monotonic() + 10
    while path.stat().st_mtime == written and time.monotonic() < deadline:
        time.sleep(0.05)
    return json.loads(path.read_text()).get("store_requests")


def wait_until_caught_up(lakehouse: Lakehouse) -> None:
    """Until the service's status has every model the scheduler runs waiting for new data (the
    models without a target_lag catch up after the landings stop), then IDLE_SETTLE_S more."""
    deadline = time.monotonic() + CAUGHT_UP_TIMEOUT_S
    path = service_status.status_path(lakehouse)
    while time.monotonic() < deadline:
        queries = json.loads(path.read_text())["queries"]
        if all(query.get("state") in ("waiting for new data", "active") for query in queries):
            break
        time.sleep(1)
    time.sleep(IDLE_SETTLE_S)


def wait_until_visible(gold: str, device_id: int, service: ServiceProcess) -> list:
    deadline = time.monotonic() + VISIBLE_TIMEOUT_S
    while time.monotonic() < deadline:
        found = commits(gold, "device_id")
        if any(c.holds(device_id) for c in found):
            return found
        if service.has_exited():
            raise RuntimeError(f"the service exited ({service.process.returncode}) while landings were pending")
        time.sleep(0.2)
    raise RuntimeError(f"device {device_id} was not in gold {VISIBLE_TIMEOUT_S} s after landing")
