"""Part 2 of `make bench`: the demo's recordings path through `dbt build` (A) vs hand-written PySpark (B).

Both read the same landing folder of generated recordings; each run is a fresh process on an
empty lakehouse, in the order A B A B ..., and is timed from this process (what a user waits for,
Python's start included). Each side also reports its own split: imports, JVM start, and for A
dbt's share (parse, compile, hooks) apart from the models' execution.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from bench.harness.child_process import alternating_pairs, module_command, run_child, timed_child
from bench.harness.fresh_lakehouse import empty_folder
from dbt_spark_streaming.lakehouse import PART_VARIABLES
from python_runners.testing.dbt_process import dbt_command
from python_runners.testing.separate_lakehouse import separate_lakehouse_env

SIDES = {"dbt": "bench.overhead.dbt_pipeline_run", "handwritten": "bench.overhead.handwritten_pipeline"}


def measure_overhead(rows: int, files: int, pairs: int, log_dir: Path) -> dict:
    landing = empty_folder("overhead_landing")
    started = time.perf_counter()
    run_child(module_command(["bench.overhead.recordings_data", "--rows", str(rows), "--files", str(files),
                              "--folder", str(landing)]), dict(os.environ), log_dir / "overhead_data.log")
    data_s = time.perf_counter() - started

    target = empty_folder("overhead_dbt_target")
    # dbt's own first parse of the project, so every measured run parses as a user's second run does.
    run_child(dbt_command(["parse"], target), _env(empty_folder("overhead_parse"), landing),
              log_dir / "overhead_parse.log")

    def run_side(side: str, module: str, pair: int) -> dict:
        lakehouse = empty_folder(f"overhead_{side}")
        arguments = ["--target-path", str(target)] if side == "dbt" else []
        run = timed_child([module, *arguments], _env(lakehouse, landing),
                          log_dir / f"overhead_{side}_{pair}.log", lakehouse / "result.json")
        shutil.rmtree(lakehouse)
        return run

    runs = alternating_pairs(SIDES, pairs, "overhead run", run_side)
    return {"rows": rows, "files": files, "pairs": pairs, "data_s": data_s, "runs": runs}


def _env(lakehouse: Path, landing: Path) -> dict[str, str]:
    return separate_lakehouse_env(lakehouse, **{PART_VARIABLES["landing"]: str(landing)})
