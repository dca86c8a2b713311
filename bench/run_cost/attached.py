"""Run cost, attached: the same runs as the no-op and 1% sides, attached to a warm driver
(`dbt-spark-streaming driver start`, adapter/dbt_spark_streaming/driver/) on their lakehouse.

- the no-op and 1% sides' runs (NOOP_RUN), alternating, in fresh processes that attach instead
  of starting a JVM.
- driver memory: the driver's resident memory (its Python process and JVM) after 10 and after
  `runs` attached runs, each landing 10 recordings and running bronze_recordings: a real batch
  through a foreachBatch call back into the run's process, and a progress listener.
- show_attached_s: `dbt show` of a streaming table while the service serves the lakehouse (the
  service is a warm driver too), its wall time from outside.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from statistics import median

from bench.harness.child_process import alternating_pairs, module_command, run_child, timed_child
from bench.latency.memory import megabytes, tree_resident
from dbt_spark_streaming.driver import driver_file
from dbt_spark_streaming.driver.attach import ATTACHED_SAID
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.session import IDLE_COLLECTION_MS
from python_runners import REPO_ROOT
from python_runners.ops.dbt_invocation import PROFILES_DIR, target_args
from python_runners.testing.logged_process import LoggedProcess
from python_runners.testing.warm_driver import COMMAND, driver_command

DBT = str(Path(sys.executable).with_name("dbt"))
NOOP_RUN = "bench.run_cost.noop_run"
MEMORY_RUNS_FIRST = 10
# The driver's memory is read once it is idle, as a user between commands sees it: after its JVM's
# idle collection, which gives back the heap it does not use. Read right after a run, it holds the
# run's garbage: 859 MB after 10 runs and 2,146 MB after 200 at commit a9e1877, of a heap that
# kept about 110 MB alive. The JVM checks for an idle collection once per interval, so one comes
# one to two intervals after the last collection.
IDLE_SAMPLE_SECONDS = 2 * IDLE_COLLECTION_MS / 1000 + 5
SERVE_TIMEOUT_SECONDS = 900


def driver(action: str, env: dict, log: Path) -> float:
    """`dbt-spark-streaming driver <action>` on the repository's project; its wall seconds."""
    return run_child(driver_command(action), env, log)


def measure_attached(pairs: int, memory_runs: int, log_dir: Path, env: dict, target: Path,
                     noop: tuple[str, list[str]], sides: dict[str, list[str]]) -> dict:
    """`noop`: (its side's name, its NOOP_RUN arguments), every streaming model with nothing new,
    run first, after one untimed run of the same catches up (the models downstream of the 1%
    runs before) and warms the driver; then `sides`, each side's NOOP_RUN arguments, alternating.
    The 1% side's new rows reach models the no-op side runs: run in turn with it, the no-op
    side would process them (the first run of this measure, at commit 4c4e955: 8.4 s, 7.1 s of it
    in the four models downstream of silver_recordings). Each of `sides` runs once untimed
    first: a driver's first batches of real rows are slower while its JIT compiles their code
    (at commit a9e1877 the first three 1% runs took 10 s, the last two 6 s)."""
    start_s = driver("start", env, log_dir / "run_cost_driver_start.log")
    print(f"  warm driver started: {start_s:.1f} s", flush=True)
    try:
        arguments = {noop[0]: noop[1], **sides}

        def run_side(side: str, module: str, pair: int) -> dict:
            return timed_child([module, *arguments[side]], env, log_dir / f"run_cost_{side}_{pair}.log",
                               target / f"{side}_{pair}.json")

        caught_up = run_side(noop[0], NOOP_RUN, 0)
        print(f"  attached catch-up (not measured): {caught_up['wall_s']:.1f} s", flush=True)
        runs = alternating_pairs({noop[0]: NOOP_RUN}, pairs, "attached", run_side)
        for side in sides:  # the driver's first batches of real rows compile their code paths
            warmed = run_side(side, NOOP_RUN, 0)
            print(f"  attached {side} warm-up (not measured): {warmed['wall_s']:.1f} s", flush=True)
        runs.update(alternating_pairs(dict.fromkeys(sides, NOOP_RUN), pairs, "attached", run_side))
        memory = driver_memory(memory_runs, log_dir, env, target)
    finally:
        driver("stop", env, log_dir / "run_cost_driver_stop.log")
    return {"driver_start_s": start_s, "runs": runs, "memory": memory,
            "show": measure_show(log_dir, env, target)}


def driver_memory(runs: int, log_dir: Path, env: dict, target: Path) -> dict:
    record = driver_file.read(Lakehouse.from_env(env).local)
    assert record is not None, "the warm driver is gone"
    bronze = [NOOP_RUN, "--target-path", str(target), "--select", "bronze_recordings",
              "--land-recordings", "10", "--result", str(target / "memory_run.json")]
    mb, walls = {}, []
    for run in range(1, runs + 1):
        started = time.perf_counter()
        run_child(module_command(bronze), env, log_dir / "run_cost_memory_run.log")
        walls.append(time.perf_counter() - started)
        if run in (MEMORY_RUNS_FIRST, runs):
            time.sleep(IDLE_SAMPLE_SECONDS)
            mb[run] = megabytes(tree_resident(record.pid))
            print(f"  driver memory after {run} attached runs: {mb[run]:.0f} MB", flush=True)
    return {"runs": runs, "mb": mb, "median_run_s": median(walls)}


def measure_show(log_dir: Path, env: dict, target: Path, times: int = 3) -> dict:
    """`dbt show` of device_counts, `times` times, while the service serves the lakehouse."""
    lakehouse = Lakehouse.from_env(env)
    service = LoggedProcess([COMMAND, "serve", "--project-dir", str(REPO_ROOT), "--profiles-dir",
                             str(PROFILES_DIR)], env, log_dir / "run_cost_show_service.log", cwd=REPO_ROOT)
    try:
        service.wait_for("the service's warm driver", lambda: _served_by(lakehouse, service.process.pid),
                         SERVE_TIMEOUT_SECONDS, interval=0.5)
        walls = []
        for number in range(1, times + 1):
            started = time.perf_counter()
            shown = subprocess.run([DBT, "show", "--select", "device_counts", "--limit", "5",
                                    "--project-dir", str(REPO_ROOT), "--profiles-dir", str(PROFILES_DIR),
                                    *target_args(target / f"show_{number}")],
                                   env=env, capture_output=True, text=True, cwd=REPO_ROOT, timeout=600)
            walls.append(time.perf_counter() - started)
            (log_dir / f"run_cost_show_{number}.log").write_text(shown.stdout + shown.stderr)
            if shown.returncode != 0 or ATTACHED_SAID not in shown.stderr:
                raise RuntimeError(f"`dbt show` did not attach to the service:\n{shown.stdout}{shown.stderr}")
            print(f"  dbt show while the service serves {number}/{times}: {walls[-1]:.1f} s", flush=True)
    finally:
        stopped = subprocess.run([COMMAND, "stop", "--project-dir", str(REPO_ROOT), "--profiles-dir",
                                  str(PROFILES_DIR)], env=env, capture_output=True, text=True, cwd=REPO_ROOT)
        if stopped.returncode != 0:
            service.kill_tree()
        service.wait(SERVE_TIMEOUT_SECONDS)
    return {"walls_s": walls, "show_attached_s": median(walls)}


def _served_by(lakehouse: Lakehouse, pid: int) -> bool:
    record = driver_file.read(lakehouse.local)
    return record is not None and record.kind == "service" and record.pid == pid
