"""What a person sees on the terminal when a run is stopped or fails: each message once, no Java
stack traces (they go to <lakehouse>/logs/spark.log), and nothing lost after Ctrl-C.

dbt and the service run as processes of their own (each starts a JVM), on a lakehouse of their
own; the test's Spark session only reads their Delta tables by path. A model sleeps per row (Spark's
`reflect` on Thread.sleep, SLEEP_MS) so that a run is still catching up when it is interrupted.
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from dbt_spark_streaming.lakehouse import Lakehouse
from python_runners.testing.command_line import run_command_line
from python_runners.testing.dbt_process import run_dbt_process
from python_runners.testing.landing import land_json_lines, landing_folder
from python_runners.testing.pipeline_process import PipelineProcess
from python_runners.testing.separate_lakehouse import separate_lakehouse_env
from python_runners.testing.service_process import ServiceProcess
from streaming_projects import SERVE_AFTER_RUN, write_streaming_project

pytestmark = pytest.mark.always_on
TIMEOUT = 600
# Enough files that slow_events is still catching up when Ctrl-C comes, after a second dbt process
# was refused (45 s of it on a loaded machine); an interrupted run leaves the rest to the next.
FILES, ROWS_PER_FILE = 48, 4

SOURCES = """
version: 2
sources:
  - name: files
    tables:
      - name: events
        meta:
          stream:
            format: json
            path: events
            schema: "id int"
            options: {maxFilesPerTrigger: "{{ env_var('FILES_PER_BATCH', '1') }}"}
      - name: all_events
        meta:
          stream:
            format: json
            path: events
            schema: "id int"
"""

SLOW_EVENTS = """
select id, reflect('java.lang.Thread', 'sleep', cast({{ env_var('SLEEP_MS', '0') }} as bigint)) as slept
from {{ source('files', 'events') }}
"""

KIND_COUNTS = """
{{ config(output_mode='complete') }}
select id % 3 as kind, count(*) as n from {{ source('files', 'all_events') }} group by id % 3
"""

REGROUPED_COUNTS = """
{{ config(output_mode='complete') }}
select id % 3 as kind, id % 2 as parity, count(*) as n
from {{ source('files', 'all_events') }} group by id % 3, id % 2
"""


def land(lakehouse: Lakehouse, first_file: int, files: int) -> None:
    folder = landing_folder(lakehouse, "events")
    for f in range(first_file, first_file + files):
        ids = range(f * ROWS_PER_FILE, (f + 1) * ROWS_PER_FILE)
        land_json_lines(folder, f"f{f:03d}.json", ({"id": i} for i in ids))


@pytest.fixture
def slow_project(tmp_path):
    project = write_streaming_project(tmp_path / "project", "terminal_messages", "slow",
                                      {"slow_events": SLOW_EVENTS, "kind_counts": KIND_COUNTS}, SOURCES)
    env = separate_lakehouse_env(tmp_path / "lakehouse")
    return project, env, Lakehouse.from_env(env)


def dbt_process(tmp_path: Path, name: str, args: list[str], env: dict, project: Path) -> PipelineProcess:
    (tmp_path / name).mkdir()
    return PipelineProcess(args, env, tmp_path / name / "out.log", project_dir=project)


def finished_output(run: PipelineProcess) -> tuple[int, str]:
    code = run.wait(TIMEOUT)
    return code, run.output()


def ids_in(spark, table: str) -> Counter:
    return Counter(row.id for row in spark.read.format("delta").load(table).collect())


def test_ctrl_c_run_lock_and_a_change_the_checkpoint_cannot_follow(spark, tmp_path, slow_project):
    project, env, lakehouse = slow_project
    land(lakehouse, 0, FILES)
    slow_table = f"{lakehouse.warehouse}/slow.db/slow_events"

    # kind_counts runs first (one batch); Ctrl-C while slow_events catches up, one 4-row file
    # per batch, ~0.4 s per row
    first = dbt_process(tmp_path, "interrupted", ["run"], {**env, "SLEEP_MS": "400"}, project)
    first.wait_for_log("progress slow.slow_events batch 1:", TIMEOUT)

    # meanwhile a second run on the same lakehouse is refused, the reason said once
    second = run_dbt_process(["run"], env, tmp_path / "second", project, TIMEOUT)
    refused = second.stdout + second.stderr
    assert second.returncode != 0
    assert refused.count(f"is in use by process {first.process.pid}") == 1, refused
    assert refused.count("Runtime Error") == 1, refused

    os.killpg(first.process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
    interrupted_at = time.monotonic()
    code, output = finished_output(first)
    assert code != 0, output
    stopped = ("Ctrl-C: stopped the stream of slow.slow_events; the next run resumes it from its "
               "checkpoint, nothing is lost.")
    assert output.count(stopped) == 1, output
    assert time.monotonic() - interrupted_at < 60, output  # it stopped; it did not catch up first
    written_before = sum(ids_in(spark, slow_table).values())
    assert 0 < written_before < FILES * ROWS_PER_FILE, output

    # the next run: slow_events processes the rest and one more file, every id once; kind_counts
    # changed in a way its checkpoint cannot take: refused before its query starts, the explanation
    # once, Java's trace (of the trial on a copy of its checkpoint) in the log
    (project / "models" / "kind_counts.sql").write_text(REGROUPED_COUNTS)
    land(lakehouse, FILES, 1)
    rerun = dbt_process(tmp_path, "rerun", ["run"], {**env, "FILES_PER_BATCH": "100"}, project)
    code, output = finished_output(rerun)
    assert code != 0, output
    remaining = (FILES + 1) * ROWS_PER_FILE - written_before
    assert f"STREAMED {remaining} rows in, {remaining} written" in output, output
    assert ids_in(spark, slow_table) == Counter(range((FILES + 1) * ROWS_PER_FILE))

    assert output.count("Model kind_counts: its query changed since the last run") == 1, output
    assert "cannot take the change: Spark refused it: [STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE]" in output, output
    assert output.count("dbt run --full-refresh --select kind_counts") == 1, output
    assert "\tat org.apache" not in output, output
    spark_log = (Path(lakehouse.root) / "logs" / "spark.log").read_text()
    assert "terminated with error" in spark_log and "\tat org.apache.spark" in spark_log


def test_service_status_while_catching_up_and_ctrl_c_while_serving(tmp_path, slow_project):
    project, env, lakehouse = slow_project
    (project / "models" / "kind_counts.sql").unlink()
    (project / "dbt_project.yml").write_text((project / "dbt_project.yml").read_text() + SERVE_AFTER_RUN)
    land(lakehouse, 0, 4)
    env = {**env, "SLEEP_MS": "400"}

    never_ran = run_command_line(["service", "status"], env, TIMEOUT)
    assert never_ran.stdout == (f"The service has not run in the lakehouse {lakehouse.root}; "
                                "`dbt-spark-streaming serve` starts it.\n")

    service = ServiceProcess(["--trigger", "1 second", "--project-dir", str(project)], env,
                             tmp_path / "service.log", TIMEOUT)
    try:
        seen = []

        def status_line() -> str:
            line = (service.command("status").stdout.splitlines() or [""])[0]
            if not seen or seen[-1] != line.split(" (process")[0]:
                seen.append(line.split(" (process")[0])
            return line

        service.wait_for("serving", lambda: status_line().startswith("service: serving"), interval=0.3)
        assert seen[-3:] == ["service: starting", "service: catching up: slow_events", "service: serving"], seen

        service.process.send_signal(signal.SIGINT)
        assert service.process.wait(timeout=TIMEOUT) == 0, service.output()[-4000:]
    finally:
        service.kill_if_running()
    # with the query that quarantines the model's unreadable lines (it reads its json source
    # without _corrupt_record: runtime/sources/corrupt_lines.py), served beside it
    served = ["slow.slow_events", "slow.slow_events__corrupt_lines:files.events"]
    stopped = [f"Ctrl-C: stopped the streams of {', '.join(names)} after their current batch; the next "
               "run resumes each from its checkpoint, nothing is lost." for names in (served, served[::-1])]
    assert sum(service.output().count(line) for line in stopped) == 1, service.output()[-4000:]
    assert service.command("status").stdout.startswith("service: stopped (process")
