"""The always-on service: every streaming model of a dbt project served, by default each time
its inputs commit.

    dbt-spark-streaming serve [--trigger on_new_data | '500 milliseconds'] [--select ...]
    dbt-spark-streaming status
    dbt-spark-streaming stop

`serve` is `dbt run` with the trigger for every streaming model, in the foreground: each model
catches up, then is served until `stop`, Ctrl-C or SIGTERM. With `on_new_data` (the default) a
model runs again each time one of its inputs commits, and not at all while nothing lands
(serve/dataflow.py); with a processing-time trigger its query keeps running on that clock. A run
or query that fails is started again with backoff (run/serving.py). A project with the
on-run-end hook serve_streaming_queries() is served by its hook; one without it, by this
command once dbt returns. `status` and `stop` work from any other shell, without dbt or Spark:
`status` reads the file the service keeps up to date in the lakehouse (progress/status_file.py),
`stop` sends SIGTERM (each query stops after its current batch). For a model with expectations,
`status` says what they did in its last batch and since the service started. All three take
dbt's --project-dir, --profiles-dir, --target and --vars, which say which lakehouse
(commands/project.py).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from typing import Optional, Sequence

from dbt_spark_streaming.commands import project
from dbt_spark_streaming.commands.project import DbtOptions
from dbt_spark_streaming.config.expectations import ExpectationCounts, expectations_said
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.progress import status_file as service_status

COMMAND = "dbt-spark-streaming"
DEFAULT_TRIGGER = "on_new_data"
STOP_TIMEOUT_SECONDS = 180
SERVE_HELP = "catch every streaming model up, then serve it until `stop` (each time its inputs commit, by default)"
STATUS_HELP = "the service's state and each served model's last batch (exit 0 while it serves)"
STOP_HELP = "stop the service: each query after its current batch (exit 0 once stopped)"


def serve_parser(prog: str = f"{COMMAND} serve") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=SERVE_HELP)
    parser.add_argument("--trigger", default=DEFAULT_TRIGGER,
                        help="trigger for every model: on_new_data (default: run when an input "
                             "commits) or a processing-time interval such as '500 milliseconds'")
    parser.add_argument("--select", "-s", nargs="*", default=None, help="dbt node selection")
    project.add_dbt_options(parser)
    return parser


def lookup_parser(action: str, description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"{COMMAND} {action}", description=description)
    project.add_dbt_options(parser)
    return parser


def main(action: str, argv: Sequence[str]) -> int:
    """`dbt-spark-streaming serve|status|stop ...`: the exit status."""
    if action == "serve":
        args = serve_parser().parse_args(list(argv))
    else:
        args = lookup_parser(action, STATUS_HELP if action == "status" else STOP_HELP).parse_args(list(argv))
    options = DbtOptions.from_args(args)
    found = project.found_or_said(options)
    if found is None:
        return 2
    _target, lakehouse = found
    if action == "serve":
        return serve(lakehouse, options, args.trigger, args.select)
    if action == "status":
        return status(lakehouse)
    return stop(lakehouse)


def run_args(options: DbtOptions, trigger: str, select: Optional[Sequence[str]]) -> list[str]:
    """`run --vars ...` with every streaming model's trigger added to the user's vars."""
    variables = {**project.parse_vars(options.vars), "stream_trigger": trigger}
    args = ["run", "--vars", json.dumps(variables)]
    return args + (["--select", *select] if select else [])


def serve(lakehouse: Lakehouse, options: DbtOptions, trigger: str, select: Optional[Sequence[str]]) -> int:
    running = service_status.read(lakehouse)
    if running and running["state"] in service_status.LIVE_STATES:
        print(f"The service is already running (process {running['pid']}, {running['state']}) on "
              f"{lakehouse.root}; `{COMMAND} stop` stops it.", file=sys.stderr)
        return 1
    status_file = service_status.StatusFile(lakehouse)
    status_file.write(state="starting")  # before dbt's import and parse, which take seconds
    args = run_args(options, trigger, select)  # a mistake in --vars stops here, before dbt
    # with pyspark and dbt, slow to import
    from dbt_spark_streaming.commands import dbt
    from dbt_spark_streaming.run import serving
    from dbt_spark_streaming.run.streaming_run import StreamingRun
    from dbt_spark_streaming.session import active_session

    def catching_up(event) -> None:
        if event.info.name == "NodeStart":  # a model's availableNow pass, before serving
            status_file.write(state="catching up", model=event.data.node_info.node_name)

    serving.serve_after_run()
    run = None
    try:
        result = dbt.invoke(args, options, callbacks=[catching_up])
        run = StreamingRun.current_or_none()  # the run dbt's adapter started
        spark = active_session()
        if result.success and run is not None and spark is not None and not run.served:
            try:  # a project without the on-run-end hook serve_streaming_queries()
                serving.serve_until_stopped(spark, run)
            except KeyboardInterrupt:  # `stop` between the run's end and serving
                serving.stop_all(spark)
    finally:
        if service_status.read(lakehouse)["state"] != "stopped":  # ended before serving
            status_file.write(state="stopped")
    if not result.success:
        if run is None or not run.interrupted:  # Ctrl-C: the line saying what stopped is out
            print(f"The service stopped: {dbt.describe_failure(result)}", file=sys.stderr)
        return 1
    return 0


def status(lakehouse: Lakehouse) -> int:
    current = service_status.read(lakehouse)
    if current is None:
        print(f"The service has not run in the lakehouse {lakehouse.root}; `{COMMAND} serve` starts it.")
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
    if current.get("store_requests"):
        print("  " + store_requests_said(current["store_requests"]))
    return 0 if current["state"] == "serving" else 1


def store_requests_said(requests: dict) -> str:
    kinds = ", ".join(f"{kind} {count}" for kind, count in requests.items() if kind != "requests" and count)
    return (f"requests to the lakehouse's object store since the service started: {requests['requests']}"
            + (f" ({kinds})" if kinds else ""))


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
