"""The always-on service: `service start` keeps the streaming models running, `service status`
lists them from another process, a query that fails is restarted and the failure logged,
one that keeps failing is set aside while the others serve on, `service stop` stops everything
cleanly.

The service runs as its own process on a lakehouse of its own (the embedded metastore admits one
process). Failure is injected through a control Delta table the model joins each micro-batch:
while it says fail, every batch of the model raises; the test flips it back.
"""

from __future__ import annotations

from collections import Counter

import pytest

from dbt_spark_streaming.lakehouse import Lakehouse
from python_runners.testing.landing import land_json_lines, landing_folder
from python_runners.testing.separate_lakehouse import separate_lakehouse_env
from python_runners.testing.service_process import ServiceProcess
from streaming_projects import write_streaming_project

pytestmark = pytest.mark.always_on
TIMEOUT = 300
QUERY = "served.checked_events"

SOURCES = """
version: 2
sources:
  - name: files
    tables:
      - name: events
        meta:
          stream:
            format: json
            path: service_events
            schema: "id int"
"""

MODEL = """
select e.id
from {{ source('files', 'events') }} as e
cross join delta.`{{ env_var('CONTROL_TABLE') }}` as c
where if(c.fail, cast(raise_error('injected failure') as boolean), true)
"""


def set_control(spark, path: str, fail: bool) -> None:
    spark.createDataFrame([(fail,)], "fail boolean").write.format("delta").mode("overwrite").save(path)


def land(lakehouse: Lakehouse, name: str, ids: range) -> None:
    land_json_lines(landing_folder(lakehouse, "service_events"), name, ({"id": i} for i in ids))


@pytest.fixture
def service_setup(tmp_path, spark):
    project = write_streaming_project(tmp_path / "project", "service_project", "served",
                                      {"checked_events": MODEL}, SOURCES, serve_after_run=True)
    control = str(tmp_path / "control")
    set_control(spark, control, fail=False)
    env = separate_lakehouse_env(tmp_path / "lakehouse", CONTROL_TABLE=control)
    return project, env, control, Lakehouse.from_env(env)


def test_the_service_serves_reports_restarts_a_failed_query_and_stops(spark, tmp_path, service_setup):
    project, env, control, lakehouse = service_setup
    table = f"{lakehouse.warehouse}/served.db/checked_events"
    land(lakehouse, "a.json", range(5))

    service = ServiceProcess(["--trigger", "1 second", "--project-dir", str(project)], env,
                             tmp_path / "service.log", TIMEOUT)
    try:
        # the model's query, and the one that quarantines its unreadable lines (it reads its json
        # source without _corrupt_record: runtime/sources/corrupt_lines.py)
        service.wait_for("serving", lambda: "Serving 2 streaming queries" in service.output())
        status = service.command("status")
        assert status.returncode == 0, status.stdout + status.stderr
        assert "service: serving" in status.stdout
        assert f"{QUERY}: active, restarts 0" in status.stdout

        set_control(spark, control, fail=True)
        land(lakehouse, "b.json", range(5, 10))
        service.wait_for("a logged failure", lambda: f"Query {QUERY} failed: " in service.output())
        assert "injected failure" in service.output().split(f"Query {QUERY} failed: ")[1].splitlines()[0]

        set_control(spark, control, fail=False)
        service.wait_for("the restarted query's rows", lambda: spark.read.format("delta").load(table).count() >= 10)
        assert f"Query {QUERY} restarted" in service.output()
        status = service.command("status")
        assert f"{QUERY}: active, restarts 0" not in status.stdout and "last failure: " in status.stdout
        assert "injected failure" in status.stdout

        assert service.stop(TIMEOUT) == 0, service.output()[-4000:]
    finally:
        service.kill_if_running()

    assert "service: stopped" in service.command("status").stdout
    ids = Counter(row.id for row in spark.read.format("delta").load(table).collect())
    assert ids == Counter(range(10))  # the failed batch was written once, after the restart
    progress = spark.read.format("delta").load(f"{lakehouse.warehouse}/_stream_progress")
    recorded = progress.where(f"query_name = '{QUERY}'").groupBy().sum("num_input_rows").first()[0]
    assert recorded == 10  # failed attempts ran no batch; each row counted once


HEALTHY_SOURCES = SOURCES + """
      - name: other_events
        meta:
          stream:
            format: json
            path: other_events
            schema: "id int"
"""


def test_a_model_that_keeps_failing_is_set_aside_while_the_others_serve(spark, tmp_path):
    """on_new_data serving: checked_events fails on every run until it is set aside; the model
    reading its table waits on it, and a landing for the other chain still reaches its end."""
    project = write_streaming_project(tmp_path / "project", "service_project", "served", {
        "checked_events": MODEL,
        "checked_copies": "select id from stream({{ ref('checked_events') }})",
        "other_events": "select id from {{ source('files', 'other_events') }}",
        "other_copies": "select id from stream({{ ref('other_events') }})",
    }, HEALTHY_SOURCES, serve_after_run=True)
    control = str(tmp_path / "control")
    set_control(spark, control, fail=False)
    env = separate_lakehouse_env(tmp_path / "lakehouse", CONTROL_TABLE=control)
    lakehouse = Lakehouse.from_env(env)
    other_folder = landing_folder(lakehouse, "other_events")
    land(lakehouse, "a.json", range(3))
    land_json_lines(other_folder, "a.json", ({"id": i} for i in range(3)))

    service = ServiceProcess(["--project-dir", str(project)], env, tmp_path / "service.log", TIMEOUT)
    try:
        service.wait_for("serving", lambda: "Serving " in service.output())
        set_control(spark, control, fail=True)
        land(lakehouse, "b.json", range(3, 6))
        service.wait_for("checked_events set aside", lambda: "set aside: the other models keep serving"
                         in service.output())

        land_json_lines(other_folder, "b.json", ({"id": i} for i in range(3, 6)))
        copies = f"{lakehouse.warehouse}/served.db/other_copies"
        service.wait_for("the other landing at the end of its chain",
                         lambda: spark.read.format("delta").load(copies).count() == 6)
        status = service.command("status")
        assert status.returncode == 0 and "service: serving" in status.stdout, status.stdout + status.stderr
        assert f"{QUERY}: FAILED 5 times in a row, set aside; tried again in " in status.stdout, status.stdout
        assert "injected failure" in status.stdout
        assert "served.checked_copies: waiting on checked_events, which failed" in status.stdout, status.stdout

        assert service.stop(TIMEOUT) == 0, service.output()[-4000:]
    finally:
        service.kill_if_running()
    checked = f"{lakehouse.warehouse}/served.db/checked_events"
    assert sorted(row.id for row in spark.read.format("delta").load(checked).collect()) == [0, 1, 2]
    assert sorted(row.id for row in spark.read.format("delta").load(copies).collect()) == list(range(6))


def test_the_service_compacts_a_served_table_and_every_row_stays_exactly_once(spark, tmp_path):
    """on_new_data serving with compaction at 4 live files: landings one at a time make a file per
    run in events and in copies; the service compacts both between runs; every row once in each."""
    project = write_streaming_project(tmp_path / "project", "service_project", "served", {
        "events": "select id from {{ source('files', 'events') }}",
        "copies": "select id from stream({{ ref('events') }})",
    }, SOURCES, serve_after_run=True)
    env = separate_lakehouse_env(tmp_path / "lakehouse", STREAM_SERVE_COMPACT_AT_FILES="4")
    lakehouse = Lakehouse.from_env(env)
    copies = f"{lakehouse.warehouse}/served.db/copies"
    land(lakehouse, "0.json", range(0, 2))
    service = ServiceProcess(["--project-dir", str(project)], env, tmp_path / "service.log", TIMEOUT)
    try:
        service.wait_for("serving", lambda: "Serving " in service.output())
        for landing in range(1, 9):
            land(lakehouse, f"{landing}.json", range(2 * landing, 2 * landing + 2))
            service.wait_for(f"landing {landing} in copies",
                             lambda landing=landing: spark.read.format("delta").load(copies).count() == 2 * landing + 2)
        service.wait_for("both tables compacted", lambda: all(
            f"Maintained {model}: compacted" in service.output() for model in ("events", "copies")))
        assert service.stop(TIMEOUT) == 0, service.output()[-4000:]
    finally:
        service.kill_if_running()
    for table in ("events", "copies"):
        location = f"{lakehouse.warehouse}/served.db/{table}"
        assert sorted(row.id for row in spark.read.format("delta").load(location).collect()) == list(range(18))
        history = spark.sql(f"describe history delta.`{location}`").collect()
        assert "OPTIMIZE" in {row.operation for row in history}
