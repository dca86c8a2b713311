"""The always-on service: every streaming model served, by default each time its inputs commit.

    python -m python_runners service start [--trigger on_new_data | '500 milliseconds'] [--select ...]
    python -m python_runners service status
    python -m python_runners service stop

`start` is `dbt run` with the trigger for every streaming model, in the foreground: each model
catches up, then is served. With `on_new_data` (the default) a model runs again each time one
of its inputs commits, and not at all while nothing lands (adapter/dbt_spark_streaming/run/
dataflow.py); with a processing-time trigger its query keeps running on that clock. A run or
query that fails is started again with backoff (adapter/dbt_spark_streaming/run/serving.py). `status` and `stop` work from any other shell: `status` reads the
file the service keeps up to date, `stop` sends SIGTERM (each query stops after its current batch).
For a model with expectations, `status` says what they did in its last batch and since the
service started.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Optional, Sequence

from dbt_spark_streaming.config.expectations import ExpectationCounts, expectations_said
from dbt_spark_streaming.progress import status_file as service_status
from dbt_spark_streaming.lakehouse import Lakehouse

DEFAULT_TRIGGER = "on_new_data"  # as `make serve` and the latency benchmark
STOP_TIMEOUT_SECONDS = 180


def add_commands(commands: argparse._SubParsersAction) -> None:
    service = commands.add_parser("service", help="run every streaming model always-on; status; stop")
    actions = service.add_subparsers(dest="action", required=True)
    start = actions.add_parser("start", help="start every streaming model and keep it running")
    start.add_argument("--trigger", default=DEFAULT_TRIGGER,
                       help="trigger for every model: on_new_data (default: run when an input "
                            "commits) or a processing-time interval such as '500 milliseconds'")
    start.add_argument("--select", nargs="*", default=None, help="dbt node selection")
    start.add_argument("--project-dir", default=None)
    actions.add_parser("status", help="the running queries and their last progress")
    actions.add_parser("stop", help="stop every query after its current batch")


def main(args: argparse.Namespace) -> int:
    lakehouse = Lakehouse.from_env()
    if args.action == "start":
        return start(lakehouse, args.trigger, args.select, args.project_dir)
    if args.action == "status":
        return status(lakehouse)
    return stop(lakehouse)


def start(lakehouse: Lakehouse, trigger: str, select: Optional[Sequence[str]], project_dir: Optional[str]) -> int:
    running = service_status.read(lakehouse)
    if running and running["state"] in service_status.LIVE_STATES:
        print(f"The service is already running (process {running['pid']}, {running['state']}); "
              "`python -m python_runners service stop` stops it.", file=sys.stderr)
        return 1
    status_file = service_status.StatusFile(lakehouse)
    status_file.write(state="starting")  # before dbt's import and parse, which take seconds
    from dbt_spark_streaming.run.streaming_run import StreamingRun  # with pyspark and dbt, slow to import
    from python_runners.ops.dbt_invocation import invoke_dbt, describe_failure

    def catching_up(event) -> None:
        if event.info.name == "NodeStart":  # a model's availableNow pass, before serving
            status_file.write(state="catching up", model=event.data.node_info.node_name)

    args = ["run", "--vars", f"{{stream_trigger: '{trigger}'}}"]
    if select:
        args += ["--select", *select]
    try:
        result = invoke_dbt(args, project_dir, callbacks=[catching_up])
    finally:
        if service_status.read(lakehouse)["state"] != "stopped":  # ended before serving
            status_file.write(state="stopped")
    if not result.success:
        run = StreamingRun.current_or_none()  # the run dbt's adapter started
        if run is None or not run.interrupted:  # Ctrl-C: the line saying what stopped is out
            print(f"The service stopped: {describe_failure(result)}", file=sys.stderr)
        return 1
    return 0


def status(lakehouse: Lakehouse) -> int:
    current = service_status.read(lakehouse)
    if current is None:
        print("The service has not run in this lakehouse.")
        return 1
    state = f"{current['state']}: {current['model']}" if current.get("model") else current["state"]
    print(f"service: {state} (process {current['pid']}, started {current['started_at']}, "
          f"updated {current['updated_at']})")
    for query in current["queries"]:
        progress = query["last_progress"] or {}
        state = query.get("state") or ("active" if query["active"] else "not running")
        line = (f"  {query['name']}: {state}, restarts {query['restarts']}, "
                f"last batch {progress.get('batch_id', '-')} at {progress.get('timestamp', '-')}: "
                f"{progress.get('num_input_rows', '-')} rows in, "
                f"{_rate(progress.get('processed_rows_per_second'))} rows/s, "
                f"{progress.get('batch_duration_ms', '-')} ms")
        if progress.get("watermark"):
            line += f", watermark {progress['watermark']}"
        line += lag_said(query)
        line += expectations_said(service_status.counts_from_json(progress.get("expectations")))
        if query["last_failure"]:
            line += f"; last failure: {query['last_failure']}"
        print(line)
        since_start = service_status.counts_from_json(query.get("expectations_since_start"))
        if since_start:
            print(f"    {expectations_since_start(since_start)}")
    if current.get("own_time"):
        print("  the service's own code: " + ", ".join(
            f"{activity} {figures['ms'] / 1000:.1f} s in {figures['calls']} calls"
            for activity, figures in current["own_time"].items()))
    return 0 if current["state"] == "serving" else 1


def stop(lakehouse: Lakehouse) -> int:
    current = service_status.read(lakehouse)
    if current is None or current["state"] not in service_status.LIVE_STATES:
        print("The service is not running.")
        return 0
    pid = current["pid"]
    # Serving stops on SIGTERM between batches; before that dbt is running models, which stop
    # on Ctrl-C (SIGINT) and resume from their checkpoints next time.
    os.kill(pid, signal.SIGTERM if current["state"] == "serving" else signal.SIGINT)
    print(f"Stopping the service (process {pid}): each query stops after its current batch ...")
    if not service_status.wait_until_gone(pid, STOP_TIMEOUT_SECONDS):
        print(f"Process {pid} is still running after {STOP_TIMEOUT_SECONDS} s.", file=sys.stderr)
        return 1
    print("Stopped.")
    return 0


def expectations_since_start(counts: ExpectationCounts) -> str:
    """'expectations since the service started: 1400 rows checked, 14 dropped, 6 quarantined;
    rows failed: heartbeat_plausible (quarantine) 6, device_known (warn) 25'"""
    failed = ", ".join(f"{rule.name} ({rule.action}) {rule.rows_failed}" for rule in counts.rules)
    return (f"expectations since the service started: {counts.rows_checked} rows checked, "
            f"{counts.rows_dropped} dropped, {counts.rows_quarantined} quarantined; "
            f"rows failed: {failed}")


def lag_said(query: dict) -> str:
    """', lag 0.0 s (last run 1.8 s after its input; target 5 s: met)' for a model the
    scheduler runs; '' for a processing-time query."""
    if query.get("lag_seconds") is None:
        return ""
    lag, last, target = query["lag_seconds"], query.get("last_run_lag_seconds"), query.get("target_lag_seconds")
    said = f", lag {lag:.1f} s"
    details = [f"last run {last:.1f} s after its input"] if last is not None else []
    if target is not None:
        worst = max(lag, last or 0.0)
        details.append(f"target {target:g} s: {'met' if worst <= target else 'MISSED'}")
    return said + (f" ({'; '.join(details)})" if details else "")


def _rate(value) -> str:
    return "-" if value is None else f"{float(value):.0f}"
