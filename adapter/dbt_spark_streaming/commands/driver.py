"""A warm driver for interactive work: dbt commands of the profile target's lakehouse attach to
its running JVM instead of starting their own (driver/).

    dbt-spark-streaming driver start [--idle-minutes 30]
    dbt-spark-streaming driver status
    dbt-spark-streaming driver stop

`start` starts the driver in the background, with the settings the profile target's sessions
start with, and returns once it accepts commands; it stops by itself after `--idle-minutes`
with no command attached. The always-on service is a warm driver too, for as long as it
serves: `status` shows either. Each takes dbt's --project-dir, --profiles-dir, --target and
--vars, which say which lakehouse and which settings (commands/project.py).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

from dbt_spark_streaming.commands import project
from dbt_spark_streaming.commands.project import DbtOptions, ProfileTarget
from dbt_spark_streaming.driver import driver_file
from dbt_spark_streaming.lakehouse import ROOT_VARIABLE, TARGET_VARIABLE, Lakehouse

COMMAND = "dbt-spark-streaming"
HELP = "a warm Spark driver that dbt commands attach to: start, status, stop"
DEFAULT_IDLE_MINUTES = 30.0
START_TIMEOUT_SECONDS = 600  # the first start on a machine fetches Spark's jars
STOP_TIMEOUT_SECONDS = 60
LOG_FILE = "driver.log"


def parser(prog: str = f"{COMMAND} driver") -> argparse.ArgumentParser:
    parsed = argparse.ArgumentParser(prog=prog, description=HELP)
    parsed.add_argument("action", choices=("start", "status", "stop"))
    parsed.add_argument("--idle-minutes", type=float, default=DEFAULT_IDLE_MINUTES,
                        help=f"start: stop after this long with no command attached (default {DEFAULT_IDLE_MINUTES:g})")
    parsed.add_argument("--foreground", action="store_true", help=argparse.SUPPRESS)
    project.add_dbt_options(parsed)
    return parsed


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(list(argv))
    options = DbtOptions.from_args(args)
    found = project.found_or_said(options)
    if found is None:
        return 2
    target, lakehouse = found
    if args.action == "status":
        return status(lakehouse)
    if args.action == "stop":
        return stop(lakehouse)
    if args.idle_minutes <= 0:
        print(f"--idle-minutes {args.idle_minutes:g}: give a number of minutes above 0.", file=sys.stderr)
        return 2
    if args.foreground:
        return run_driver(lakehouse, target, args.idle_minutes)
    return start(lakehouse, list(argv))


def start(lakehouse: Lakehouse, argv: list[str]) -> int:
    running = driver_file.read(lakehouse.local)
    if running is not None:
        print(f"A warm driver already runs for {lakehouse.root} ({_who(running)}).")
        return 0
    log = Path(lakehouse.local) / driver_file.FOLDER / LOG_FILE
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "dbt_spark_streaming.command_line", "driver", *argv, "--foreground"],
            stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        record = driver_file.read(lakehouse.local)
        if record is not None and record.pid == process.pid:
            print(f"Warm driver started for {lakehouse.root} (process {process.pid}): dbt commands of "
                  f"this target attach to it; it stops after {record.idle_minutes:g} minutes with none "
                  f"attached, or with `{COMMAND} driver stop`.")
            return 0
        if process.poll() is not None:
            print(f"The warm driver did not start:\n{_tail(log)}", file=sys.stderr)
            return 1
        time.sleep(0.2)
    process.terminate()
    print(f"The warm driver did not start within {START_TIMEOUT_SECONDS} s; its log: {log}", file=sys.stderr)
    return 1


def run_driver(lakehouse: Lakehouse, target: ProfileTarget, idle_minutes: float) -> int:
    """The driver's own process: a session with the target's settings, attached to until idle."""
    from dbt_spark_streaming.driver.host import DriverHost
    from dbt_spark_streaming import session

    os.environ.update({ROOT_VARIABLE: lakehouse.root, TARGET_VARIABLE: lakehouse.target})
    spark = session.get_or_create_session(
        lakehouse, master=target.master or session.DEFAULT_MASTER,
        extra_conf=target.server_side_parameters, metastore_url=target.metastore_url)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))
    host = DriverHost(spark, lakehouse.local, session.started_conf(), kind="driver",
                      idle_minutes=idle_minutes, log=lambda line: print(line, flush=True))
    host.start()
    print(f"warm driver: serving {lakehouse.root} (process {os.getpid()})", flush=True)
    try:
        while not stopping and host.idle_seconds() < idle_minutes * 60:
            time.sleep(0.5)
    finally:
        host.stop()
    print("warm driver: stopped" + ("" if stopping else f" after {idle_minutes:g} idle minutes"), flush=True)
    return 0


def status(lakehouse: Lakehouse) -> int:
    record = driver_file.read(lakehouse.local)
    if record is None:
        print(f"No warm driver runs for {lakehouse.root}; `{COMMAND} driver start` starts one.")
        return 1
    print(f"warm driver: {_who(record)}, started {record.started_at}, for {lakehouse.root}")
    asked = ask_status(record)
    if asked is None:
        print("  it does not answer.")
        return 1
    idle = asked["idle_seconds"]
    print(f"  {len(asked['clients'])} command(s) attached now, {asked['attachments']} since it started"
          + (f"; idle {idle:.0f} s" if not asked["clients"] else ""))
    for client in asked["clients"]:
        print(f"  process {client['pid']}: {client['command']}")
    return 0


def ask_status(record: driver_file.DriverRecord, timeout: float = 2.0) -> Optional[dict]:
    try:
        with socket.create_connection(("127.0.0.1", record.port), timeout=timeout) as connection:
            connection.sendall((json.dumps({"secret": record.secret, "ask": "status"}) + "\n").encode())
            return json.loads(connection.makefile("r", encoding="utf-8").readline())
    except (OSError, ValueError):
        return None


def stop(lakehouse: Lakehouse) -> int:
    record = driver_file.read(lakehouse.local)
    if record is None:
        print("No warm driver runs.")
        return 0
    if record.kind == "service":
        print(f"The warm driver is the service's (process {record.pid}); `{COMMAND} stop` stops the service.",
              file=sys.stderr)
        return 1
    os.kill(record.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    while driver_file.process_alive(record.pid):
        if time.monotonic() > deadline:
            print(f"Process {record.pid} is still running after {STOP_TIMEOUT_SECONDS} s.", file=sys.stderr)
            return 1
        time.sleep(0.2)
    print("Stopped.")
    return 0


def _who(record: driver_file.DriverRecord) -> str:
    return f"the service, process {record.pid}" if record.kind == "service" else f"process {record.pid}"


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8").splitlines()[-lines:])
    except OSError:
        return f"(no log at {path})"
