"""Expectations on streaming rows: three landings with known bad rows, the counts of each
expectation in the run output and the progress table equal to the counts worked out in Python,
the dropped and quarantined rows exactly the expected ones; a `fail` rule stops the batch with
nothing written and the checkpoint where it was, and the batch is processed once after the fix;
a bad expectation config stops before anything runs.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from dbt_spark_streaming.progress import table as progress_table
from dbt_spark_streaming.writes import commit_faults
from python_runners.testing import delta_log
from python_runners.testing.landing import land_json_lines, landing_folder
from dbt_results import failure_messages, node_results, rows_processed
from streaming_projects import write_streaming_project

pytestmark = pytest.mark.slow  # expectations' counts against the landed data, landing after landing: make test runs it, test-fast does not

SCHEMA = "expectations"
FUTURE = 4102444800  # 2100-01-01, epoch seconds
NOW = 1767225600  # 2026-01-01
KNOWN_DEVICES = (1, 2, 3)


def reading(number: int, device_id: int | None = 1, heartbeat: float | None = 72.0, time: int = NOW) -> dict:
    return {"reading_id": f"r{number}", "device_id": device_id, "heartbeat": heartbeat, "time": time + number}


# Each landing: good rows, and rows that break one rule or several (a null breaks a rule too).
LANDINGS = [
    [reading(1), reading(2, heartbeat=900.0), reading(3, device_id=7), reading(4, time=FUTURE),
     reading(5, device_id=2, heartbeat=120.0), reading(6, heartbeat=None)],
    [reading(7, device_id=9, heartbeat=5.0), reading(8, device_id=3, heartbeat=101.0), reading(9, time=FUTURE, heartbeat=300.0),
     reading(10, device_id=None, time=FUTURE)],
    [reading(11), reading(12, device_id=8, time=FUTURE), reading(13, heartbeat=19.5), reading(14, device_id=2, heartbeat=80.0)],
]

SOURCES = """
version: 2
sources:
  - name: landing
    tables:
      - name: readings
        meta:
          stream:
            format: json
            path: expectation_readings
            create_path: true
            schema: reading_id string, device_id int, heartbeat double, time bigint
"""

CHECKED = """{{ config(expectations=[
    {'name': 'heartbeat_plausible', 'expression': 'heartbeat between 20 and 250', 'action': 'quarantine'},
    {'name': 'device_known', 'expression': 'device_id in (1, 2, 3)', 'action': 'warn'},
    {'name': 'not_from_the_future', 'expression': 'recorded_at <= current_timestamp()', 'action': 'drop'},
]) }}
select reading_id, device_id, heartbeat, timestamp_seconds(time) as recorded_at
from {{ source('landing', 'readings') }}"""

# Complete mode: the whole result is checked each batch; the quarantine holds the current one's.
COUNTED = """{{ config(output_mode='complete', expectations=[
    {'name': 'device_listed', 'expression': 'device_id <= 3', 'action': 'quarantine'},
]) }}
select device_id, count(*) as readings from stream({{ ref('checked_readings') }}) group by device_id"""

# COPY INTO: each load's rows checked once, its quarantine appended under the load's transaction.
LOADED = """{{ config(materialized='copy_into', expectations=[
    {'name': 'heartbeat_plausible', 'expression': 'heartbeat between 20 and 250', 'action': 'quarantine'},
    {'name': 'not_from_the_future', 'expression': 'time < 4102444800', 'action': 'drop'},
]) }}
select reading_id, device_id, heartbeat, time from {{ source('landing', 'readings') }}"""

# A cdc_table: a change without its key would fail the batch; the rule sets it aside instead.
LATEST = """{{ config(materialized='cdc_table', keys=['device_id'], sequence_by='time', expectations=[
    {'name': 'device_present', 'expression': 'device_id is not null', 'action': 'quarantine'},
]) }}
select device_id, reading_id, time from {{ source('landing', 'readings') }}"""

# Update mode: each batch's changed aggregate rows are checked as they are merged.
HIGHEST = """{{ config(output_mode='update', unique_key='device_id', expectations=[
    {'name': 'calm', 'expression': 'max_heartbeat < 100', 'action': 'warn'},
]) }}
select device_id, max(heartbeat) as max_heartbeat from stream({{ ref('checked_readings') }}) group by device_id"""

MODELS = {"checked_readings": CHECKED, "readings_per_device": COUNTED, "loaded_readings": LOADED,
          "latest_reading_per_device": LATEST, "highest_heartbeat_per_device": HIGHEST}


def heartbeat_plausible(row: dict) -> bool:
    return row["heartbeat"] is not None and 20 <= row["heartbeat"] <= 250


def device_known(row: dict) -> bool:
    return row["device_id"] in KNOWN_DEVICES


def not_from_the_future(row: dict) -> bool:
    return row["time"] < FUTURE


RULES = {"heartbeat_plausible": heartbeat_plausible, "device_known": device_known,
         "not_from_the_future": not_from_the_future}


def failures(rows: list[dict]) -> dict[str, int]:
    return {name: sum(not rule(row) for row in rows) for name, rule in RULES.items()}


def quarantined(row: dict) -> bool:
    return not heartbeat_plausible(row)


def dropped(row: dict) -> bool:
    return not not_from_the_future(row) and not quarantined(row)


def ids(rows) -> list[str]:
    return sorted(row["reading_id"] for row in rows)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return write_streaming_project(
        tmp_path_factory.mktemp("expectations"), "expectations_project", SCHEMA, MODELS, SOURCES,
        serve_after_run=True,  # its on-run-end writes the run's batches to the progress table
    )


def progress_counts(spark, model: str) -> tuple[Counter, int, int]:
    rows = spark.sql(
        f"select rows_dropped_by_expectations as dropped, rows_quarantined_by_expectations as "
        f"quarantined, expectations from {progress_table.table_name()} where model = '{model}'"
    ).collect()
    failed: Counter = Counter()
    for row in rows:
        for rule in row["expectations"] or []:
            failed[rule["name"]] += rule["rows_failed"]
    return failed, sum(row["dropped"] or 0 for row in rows), sum(row["quarantined"] or 0 for row in rows)


def test_counts_quarantined_and_dropped_rows_equal_the_landed_data_worked_out_in_python(
    spark, dbt, project, lakehouse
):
    folder = Path(lakehouse.landing_path("expectation_readings"))
    landed: list[dict] = []
    not_calm = 0  # changed rows of highest_heartbeat_per_device that break its rule
    for number, rows in enumerate(LANDINGS):
        land_json_lines(folder, f"readings-{number}.json", rows)
        landed += rows

        result = dbt("run", project_dir=str(project))
        assert result.success, failure_messages(result)

        expected = failures(rows)
        message = node_results(result)["checked_readings"].message
        left_out = [f"{n} {verb}" for n, verb in (
            (sum(map(dropped, rows)), "dropped"), (sum(map(quarantined, rows)), "quarantined")) if n]
        assert f", {' and '.join(left_out)} by expectations" in message, message
        assert f"warnings: device_known {expected['device_known']}" in message, message
        assert rows_processed(result)["checked_readings"] == len(rows)
        loaded = node_results(result)["loaded_readings"].message
        assert f"{' and '.join(left_out)} by expectations" in loaded, loaded
        kept = [row for row in landed if not quarantined(row) and not dropped(row)]
        changed = {row["device_id"] for row in rows if not quarantined(row) and not dropped(row)}
        not_calm += sum(
            max(row["heartbeat"] for row in kept if row["device_id"] == device) >= 100 for device in changed
        )

    written = [row for row in landed if not quarantined(row) and not dropped(row)]
    assert ids(spark.table(f"{SCHEMA}.checked_readings").collect()) == ids(written)
    # Warned rows are kept.
    assert any(not device_known(row) for row in written)
    quarantine = spark.table(f"{SCHEMA}.checked_readings__quarantine").collect()
    assert ids(quarantine) == ids(filter(quarantined, landed))
    for row in quarantine:
        source = next(landed_row for landed_row in landed if landed_row["reading_id"] == row["reading_id"])
        assert row["_failed_expectations"] == [n for n, rule in RULES.items() if not rule(source)]
        assert row["_quarantined_at"] is not None

    failed, dropped_rows, quarantined_rows = progress_counts(spark, "checked_readings")
    assert dict(failed) == failures(landed)
    assert (dropped_rows, quarantined_rows) == (sum(map(dropped, landed)), sum(map(quarantined, landed)))

    per_device = Counter(row["device_id"] for row in written)
    counted = {row["device_id"]: row["readings"] for row in spark.table(f"{SCHEMA}.readings_per_device").collect()}
    assert counted == {device: n for device, n in per_device.items() if device is not None and device <= 3}
    held = spark.table(f"{SCHEMA}.readings_per_device__quarantine").collect()
    assert {row["device_id"]: row["readings"] for row in held} == {
        device: n for device, n in per_device.items() if device is None or device > 3
    }
    assert all(row["_failed_expectations"] == ["device_listed"] for row in held)

    assert ids(spark.table(f"{SCHEMA}.loaded_readings").collect()) == ids(written)
    assert ids(spark.table(f"{SCHEMA}.loaded_readings__quarantine").collect()) == ids(filter(quarantined, landed))

    latest: dict[int, dict] = {}
    for row in sorted(landed, key=lambda row: row["time"]):
        if row["device_id"] is not None:
            latest[row["device_id"]] = row
    assert ids(spark.table(f"{SCHEMA}.latest_reading_per_device").collect()) == ids(latest.values())
    set_aside = spark.table(f"{SCHEMA}.latest_reading_per_device__quarantine").collect()
    assert ids(set_aside) == ids(row for row in landed if row["device_id"] is None)
    # Only the second landing has a row without its device: the other batches add no commit.
    quarantine_table = Path(lakehouse.warehouse) / f"{SCHEMA}.db" / "latest_reading_per_device__quarantine"
    operations = [action["commitInfo"]["operation"] for commit in delta_log.commit_files(quarantine_table)
                  for action in commit.actions() if "commitInfo" in action]
    assert operations == ["CREATE TABLE", "WRITE"], operations

    highest = {row["device_id"]: row["max_heartbeat"] for row in spark.table(f"{SCHEMA}.highest_heartbeat_per_device").collect()}
    assert highest == {device: max(row["heartbeat"] for row in written if row["device_id"] == device) for device in per_device}
    assert progress_counts(spark, "highest_heartbeat_per_device")[0] == Counter({"calm": not_calm})


FAILING = """{{{{ config(expectations=[
    {{'name': 'heartbeat_plausible', 'expression': '{expression}', 'action': 'fail'}},
]) }}}}
select reading_id, device_id, heartbeat from {{{{ source('landing', 'strict_readings') }}}}"""

STRICT_SOURCES = SOURCES.replace("- name: readings", "- name: strict_readings").replace(
    "path: expectation_readings", "path: strict_readings"
)


def committed_batches(checkpoint: Path) -> list[str]:
    return sorted(p.name for p in (checkpoint / "commits").iterdir() if p.name.isdigit())


def test_a_failing_row_stops_the_batch_before_anything_is_written_and_the_fixed_rerun_writes_it_once(
    spark, dbt, tmp_path, lakehouse
):
    project = write_streaming_project(
        tmp_path / "strict", "expectations_strict", SCHEMA,
        {"strict_readings": FAILING.format(expression="heartbeat between 20 and 250")}, STRICT_SOURCES,
    )
    folder = Path(lakehouse.landing_path("strict_readings"))
    table = Path(lakehouse.warehouse) / f"{SCHEMA}.db" / "strict_readings"
    checkpoint = Path(lakehouse.checkpoint_path(f"{SCHEMA}/strict_readings"))
    land_json_lines(folder, "good.json", [reading(1), reading(2)])
    assert dbt("run", project_dir=str(project)).success
    version, commits = delta_log.latest_version(table), committed_batches(checkpoint)

    bad = [reading(3), reading(4, heartbeat=900.0), reading(5)]
    land_json_lines(folder, "bad.json", bad)
    result = dbt("run", project_dir=str(project))

    assert not result.success
    message = failure_messages(result)
    assert "Model strict_readings" in message and "heartbeat_plausible" in message
    assert "heartbeat between 20 and 250" in message and '"reading_id":"r4"' in message
    assert "Nothing of this batch was written" in message
    assert delta_log.latest_version(table) == version
    assert committed_batches(checkpoint) == commits
    assert spark.table(f"{SCHEMA}.strict_readings").count() == 2

    (project / "models" / "strict_readings.sql").write_text(
        FAILING.format(expression="heartbeat between 20 and 1000") + "\n"
    )
    result = dbt("run", project_dir=str(project))

    assert result.success, failure_messages(result)
    written = Counter(row["reading_id"] for row in spark.table(f"{SCHEMA}.strict_readings").collect())
    assert written == Counter(["r1", "r2", "r3", "r4", "r5"])


@pytest.mark.parametrize("expectation, named", [
    ("{'name': 'plausible', 'expression': 'heartbeat > 20', 'action': 'reject'}", "action 'reject'"),
    ("{'name': 'plausible', 'expression': 'heartbeat >> 20 (', 'action': 'drop'}", "'plausible'"),
    ("{'name': 'plausible', 'expression': 'heart_beat > 20', 'action': 'drop'}", "heart_beat"),
    ("{'name': 'plausible', 'expression': 'heartbeat + 1', 'action': 'drop'}", "not true or false"),
    ("{'name': 'plausible', 'expr': 'heartbeat > 20'}", "did you mean 'expression'"),
])
def test_a_bad_expectation_fails_before_anything_runs_naming_the_model(
    spark, dbt, tmp_path, lakehouse, expectation, named
):
    model = (
        f"{{{{ config(expectations=[{expectation}]) }}}}\n"
        "select reading_id, device_id, heartbeat from {{ source('landing', 'readings') }}"
    )
    project = write_streaming_project(tmp_path / "bad", "expectations_bad", SCHEMA, {"badly_checked": model}, SOURCES)

    result = dbt("run", project_dir=str(project))

    assert not result.success
    message = failure_messages(result)
    assert "Model badly_checked" in message and named in message, message
    assert not spark.catalog.tableExists(f"{SCHEMA}.badly_checked")
    assert not Path(lakehouse.checkpoint_path(f"{SCHEMA}/badly_checked")).exists()


def test_a_batch_failed_between_the_quarantine_and_the_table_writes_each_row_once(spark, dbt, lakehouse, tmp_path):
    """Failed right after the batch's quarantined rows committed, before the model's own rows and
    the checkpoint (the commit fault seam, as a SIGKILL at that moment leaves it): the next run
    replays the batch; the quarantine's write is skipped (its commit is marked with the query and
    batch), the table's is done, and no row is lost or doubled."""
    schema = "expectations_fault"
    project = str(write_streaming_project(
        tmp_path / "project", "expectations_fault", schema, {"checked_readings": CHECKED},
        SOURCES.replace("path: expectation_readings", "path: expectation_fault_readings"),
    ))
    folder = landing_folder(lakehouse, "expectation_fault_readings")
    tables = Path(lakehouse.warehouse) / f"{schema}.db"
    quarantine, table = tables / "checked_readings__quarantine", tables / "checked_readings"

    land_json_lines(folder, "readings-0.json", LANDINGS[0])
    assert dbt("run", project_dir=project).success
    table_version = delta_log.latest_version(table)

    land_json_lines(folder, "readings-1.json", LANDINGS[1])
    with commit_faults.failing_after_commit(f"{schema}.checked_readings__quarantine") as armed:
        failed = dbt("run", project_dir=project)
    assert armed.fired and not failed.success
    assert delta_log.latest_version(table) == table_version  # failed between the two writes
    again = dbt("run", project_dir=project)
    assert again.success, failure_messages(again)

    landed = LANDINGS[0] + LANDINGS[1]
    read = lambda path: Counter(  # noqa: E731
        row["reading_id"] for row in spark.read.format("delta").load(str(path)).collect()
    )
    written = [row for row in landed if not quarantined(row) and not dropped(row)]
    assert read(table) == Counter(ids(written))
    assert read(quarantine) == Counter(ids(filter(quarantined, landed)))
