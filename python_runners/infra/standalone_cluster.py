"""A Spark standalone cluster on loopback: one master and N workers, for tests and demos.

Started and stopped by `python -m python_runners cluster start|stop` (cluster.py). The daemons are Spark's own
(`org.apache.spark.deploy.master.Master` and `...worker.Worker`), started and stopped with the
`sbin/spark-daemon.sh` that ships inside pyspark, the script behind Spark's start-master.sh and
start-worker.sh. They run in the background until `stop`; logs, pid files and the workers'
executor folders are in `<lakehouse>/cluster/`.

Sizes and ports use Spark's own variables: SPARK_MASTER_PORT (7077), SPARK_MASTER_WEBUI_PORT
(8080), SPARK_WORKER_WEBUI_PORT (8081, then one up per worker), SPARK_WORKER_CORES (1 each),
SPARK_WORKER_MEMORY (2g each); CLUSTER_WORKERS (2) is how many workers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import pyspark

from dbt_spark_streaming.java_runtime import choose_java
from dbt_spark_streaming.lakehouse import Lakehouse

HOST = "127.0.0.1"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
SPARK_HOME = Path(pyspark.__file__).parent
IDENT = "lakehouse"  # in the daemons' pid and log file names


class ClusterError(RuntimeError):
    pass


@dataclass(frozen=True)
class ClusterSettings:
    folder: Path
    workers: int
    worker_cores: int
    worker_memory: str
    master_port: int
    master_webui_port: int
    first_worker_webui_port: int

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> "ClusterSettings":
        return cls(
            folder=Path(Lakehouse.from_env(env).root) / "cluster",
            workers=int(env.get("CLUSTER_WORKERS", "2")),
            worker_cores=int(env.get("SPARK_WORKER_CORES", "1")),
            worker_memory=env.get("SPARK_WORKER_MEMORY", "2g"),
            master_port=int(env.get("SPARK_MASTER_PORT", "7077")),
            master_webui_port=int(env.get("SPARK_MASTER_WEBUI_PORT", "8080")),
            first_worker_webui_port=int(env.get("SPARK_WORKER_WEBUI_PORT", "8081")),
        )

    @property
    def master_url(self) -> str:
        return f"spark://{HOST}:{self.master_port}"

    @property
    def master_webui(self) -> str:
        return f"http://{HOST}:{self.master_webui_port}"


def start(settings: ClusterSettings, timeout_seconds: float = 90) -> dict:
    """Start the master and the workers (those not running yet); returns the master's state."""
    _daemon(settings, "start", MASTER_CLASS, 1, [
        "--host", HOST, "--port", str(settings.master_port),
        "--webui-port", str(settings.master_webui_port),
    ])
    for number in range(1, settings.workers + 1):
        _daemon(settings, "start", WORKER_CLASS, number, [
            "--host", HOST, "--webui-port", str(settings.first_worker_webui_port + number - 1),
            "--cores", str(settings.worker_cores), "--memory", settings.worker_memory,
            "--work-dir", str(settings.folder / "work"),
            settings.master_url,
        ])
    return wait_until_workers_alive(settings, timeout_seconds)


def stop(settings: ClusterSettings) -> None:
    for number in range(settings.workers, 0, -1):
        _daemon(settings, "stop", WORKER_CLASS, number, [])
    _daemon(settings, "stop", MASTER_CLASS, 1, [])


def master_state(settings: ClusterSettings) -> dict:
    """The master's JSON view (`/json/`): workers, running and completed applications."""
    return read_json(f"{settings.master_webui}/json/")


def worker_state(worker: dict) -> dict:
    """A worker's JSON view (`<webuiaddress>/json/`): its executors, running and finished."""
    return read_json(f"{worker['webuiaddress'].rstrip('/')}/json/")


def read_json(url: str, timeout_seconds: float = 5) -> dict:
    with urllib.request.urlopen(url, timeout=timeout_seconds) as response:
        return json.load(response)


def alive_workers(state: dict) -> list[dict]:
    return [worker for worker in state.get("workers", []) if worker.get("state") == "ALIVE"]


def wait_until_workers_alive(settings: ClusterSettings, timeout_seconds: float) -> dict:
    deadline = time.monotonic() + timeout_seconds
    state: dict = {}
    while time.monotonic() < deadline:
        try:
            state = master_state(settings)
            if len(alive_workers(state)) >= settings.workers:
                return state
        except OSError:
            pass  # the master's web UI is not up yet
        time.sleep(0.5)
    raise ClusterError(
        f"The standalone cluster did not come up within {timeout_seconds:.0f} s: "
        f"{len(alive_workers(state))} of {settings.workers} workers alive at "
        f"{settings.master_webui}. Logs: {settings.folder / 'logs'}."
    )


def _daemon(settings: ClusterSettings, action: str, cls: str, number: int, args: list[str]) -> None:
    if action == "start" and _is_running(settings, cls, number):
        return
    command = ["bash", str(SPARK_HOME / "sbin" / "spark-daemon.sh"), action, cls, str(number), *args]
    completed = subprocess.run(command, env=_daemon_env(settings), capture_output=True, text=True)
    if completed.returncode != 0:
        raise ClusterError(
            f"`spark-daemon.sh {action} {cls} {number}` failed ({completed.returncode}): "
            f"{(completed.stderr or completed.stdout).strip()[-2000:]}"
        )


def _is_running(settings: ClusterSettings, cls: str, number: int) -> bool:
    pid_file = settings.folder / "pids" / f"spark-{IDENT}-{cls}-{number}.pid"
    try:
        os.kill(int(pid_file.read_text().strip()), 0)
        return True
    except (OSError, ValueError):
        return False


def _daemon_env(settings: ClusterSettings) -> dict[str, str]:
    folder = settings.folder
    for part in ("logs", "pids", "work"):
        (folder / part).mkdir(parents=True, exist_ok=True)
    # spark-daemon.sh reads SPARK_MASTER as a host to rsync Spark's code from; ours is a URL.
    inherited = {key: value for key, value in os.environ.items() if key != "SPARK_MASTER"}
    return {
        **inherited,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOG_DIR": str(folder / "logs"),
        "SPARK_PID_DIR": str(folder / "pids"),
        "SPARK_IDENT_STRING": IDENT,
        "SPARK_LOCAL_IP": HOST,
        "SPARK_DAEMON_MEMORY": os.environ.get("SPARK_DAEMON_MEMORY", "512m"),
        # The driver's Java (java_runtime.py): executors deserialize what it serializes.
        "JAVA_HOME": str(choose_java().home),
        # Executors inherit it: Python workers (UDFs) run this project's interpreter.
        "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
    }
