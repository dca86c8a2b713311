"""The demo pipeline run after run: each run processes exactly what is new, at every layer; silver
keeps what its expectations let through (python_runners/demo/recording_rules.py)."""

from __future__ import annotations

import json
import os

import pytest

from dbt_results import failure_messages, node_results, rows_processed
from python_runners.testing import recompute
from python_runners.demo.data import (
    FIRST_BATCH_EPOCH, STATUS_EVERY_SECONDS, batch_status_reports, land_batch,
    land_status_reports, recordings_folder, status_folder,
)
from python_runners.demo.recording_rules import REGISTERED_DEVICES
from python_runners.demo.patient_changes import land_patient_changes, patient_changes_folder

pytestmark = pytest.mark.slow  # the demo's every model, landing after landing, against a recompute: make test runs it, test-fast does not

# Models that read every new row (quarantined_recordings reads only files with unreadable
# lines: Delta skips the others by their column statistics), and those that read what silver kept.
READ_EVERY_ROW = ["bronze_recordings", "silver_recordings"]
READ_WHAT_SILVER_KEPT = ["device_counts", "ward_heart_rates"]
TABLES = {
    "bronze_recordings": "bronze.bronze_recordings",
    "silver_recordings": "silver.silver_recordings",
    "quarantined_recordings": "silver.quarantined_recordings",
    "device_counts": "gold.device_counts",
    "ward_heart_rates": "gold.ward_heart_rates",
    "bronze_device_status": "bronze.bronze_device_status",
    "silver_device_status": "silver.silver_device_status",
    "recordings_with_device_status": "silver.recordings_with_device_status",
    "bronze_patient_changes": "bronze.bronze_patient_changes",
    "patients": "silver.patients",
    "patient_ward_history": "silver.patient_ward_history",
}


@pytest.fixture(scope="module")
def folder(lakehouse):
    return recordings_folder(lakehouse)


@pytest.fixture(scope="module")
def reports_folder(lakehouse):
    return status_folder(lakehouse)


@pytest.fixture(scope="module")
def changes_folder(lakehouse):
    return patient_changes_folder(lakehouse)


@pytest.fixture(scope="module")
def built(dbt, folder, reports_folder, changes_folder):
    """First landing (recordings, status reports, patient changes), then `dbt build`: seed,
    every streaming model, every data test."""
    batch = land_batch(folder, records=300, files=3)
    land_status_reports(batch.number, reports_folder)
    land_patient_changes(batch.number, changes_folder)
    result = dbt("build")
    assert result.success, failure_messages(result)
    return batch, result


def count(spark, table: str) -> int:
    return spark.table(table).count()


def assert_gold_matches_recompute(spark, folder) -> None:
    assert recompute.gold_mismatches(spark, folder) == []


def every_layer_processed(result, landed: int, kept: int) -> None:
    processed = rows_processed(result)
    assert {model: processed[model] for model in READ_EVERY_ROW + READ_WHAT_SILVER_KEPT} == {
        **dict.fromkeys(READ_EVERY_ROW, landed), **dict.fromkeys(READ_WHAT_SILVER_KEPT, kept)
    }
    assert processed["quarantined_recordings"] in (0, landed)


def test_build_streams_every_landed_row_through_every_layer(built, spark, folder):
    batch, result = built
    every_layer_processed(result, batch.records, batch.kept)
    assert count(spark, "bronze.bronze_recordings") == batch.records
    assert count(spark, "silver.silver_recordings") == batch.kept < batch.records
    assert_gold_matches_recompute(spark, folder)


def test_bronze_keeps_ingestion_metadata(built, spark):
    batch, _ = built
    files = {row.source_file for row in spark.table("bronze.bronze_recordings").collect()}
    assert files == {f"file:{path}" for path in batch.files}


def test_silver_is_enriched_from_the_devices_seed(built, spark):
    rows = spark.sql(
        "select device_id, ward from silver.silver_recordings where device_id in (2, 11)"
    ).collect()
    wards = {row.device_id: row.ward for row in rows}
    assert wards[2] == "intensive care"
    assert wards[11] is None  # not in the seed: kept, not dropped by the join


def joined_rows(spark) -> set[tuple]:
    rows = spark.sql(
        "select recording_id, unix_timestamp(reported_at) as reported, battery_pct "
        "from silver.recordings_with_device_status"
    ).collect()
    return {tuple(row) for row in rows}


def expected_join(spark, batch_numbers: list[int]) -> set[tuple]:
    """Batch recompute: each recording of these batches with its device's last report before it."""
    battery = {
        (report["device_id"], report["time"]): report["battery_pct"]
        for number in batch_numbers for report in batch_status_reports(number)
    }
    recordings = spark.sql(
        "select recording_id, device_id, unix_timestamp(recorded_at) as recorded "
        "from silver.silver_recordings"
    ).collect()
    expected = set()
    for row in recordings:
        if row.recording_id.startswith(tuple(f"b{number:05d}-" for number in batch_numbers)):
            reported = row.recorded - (row.recorded - FIRST_BATCH_EPOCH) % STATUS_EVERY_SECONDS
            expected.add((row.recording_id, reported, battery[(row.device_id, reported)]))
    return expected


def test_stream_stream_join_waits_across_runs_for_the_other_side(
    built, dbt, spark, folder, reports_folder
):
    first, _ = built
    assert joined_rows(spark) == expected_join(spark, [first.number])
    assert len(joined_rows(spark)) == first.kept

    batch = land_batch(folder, records=60, files=1)
    result = dbt("run")
    assert result.success, failure_messages(result)
    assert joined_rows(spark) == expected_join(spark, [first.number])  # its reports are not here yet

    land_status_reports(batch.number, reports_folder)
    result = dbt("run")
    assert result.success, failure_messages(result)
    assert joined_rows(spark) == expected_join(spark, [first.number, batch.number])
    assert len(joined_rows(spark)) == first.kept + batch.kept


def test_second_run_processes_only_the_new_batch(built, dbt, spark, folder):
    before = count(spark, "bronze.bronze_recordings")
    batch = land_batch(folder, records=120, files=2)

    result = dbt("run")

    assert result.success, failure_messages(result)
    every_layer_processed(result, batch.records, batch.kept)
    assert count(spark, "bronze.bronze_recordings") == before + batch.records
    assert_gold_matches_recompute(spark, folder)


def ids(rows) -> set[str]:
    return {row["recording_id"] for row in rows}


def test_silvers_expectations_quarantine_implausible_drop_future_and_keep_unknown_devices(
    built, dbt, spark, folder
):
    """The run output counts what the plain-Python rules count in the batch; over everything
    landed, the quarantine holds exactly the implausible recordings, each with the rules it
    failed, a recording from the future is in neither table, and one from a device the seed does
    not know is in silver."""
    batch = land_batch(folder, records=150, files=2)

    result = dbt("run")

    assert result.success, failure_messages(result)
    checked = batch.checked
    message = node_results(result)["silver_recordings"].message
    assert (
        f"{batch.records} rows in, {batch.kept} written, {len(checked.dropped)} dropped and "
        f"{len(checked.quarantined)} quarantined by expectations, "
        f"warnings: device_known {checked.warnings['device_known']}"
    ) in message, message
    landed = recompute.checked_recordings(spark, folder)
    assert recompute.quarantine_rows(spark) == recompute.expected_quarantine(spark, folder)
    held = spark.table(recompute.QUARANTINE_TABLE).select("recording_id", "heartbeat").collect()
    assert {row.heartbeat for row in held} == {0.0, 900.0, None}  # as landed
    silver = ids(spark.table("silver.silver_recordings").select("recording_id").collect())
    assert silver == ids(landed.kept)
    future = ids(landed.dropped)
    assert future and not future & (silver | ids(held))
    unknown_devices = ids(row for row in landed.kept if row["device_id"] not in REGISTERED_DEVICES)
    assert unknown_devices and unknown_devices <= silver
    assert_gold_matches_recompute(spark, folder)


def test_run_with_nothing_new_changes_nothing(built, dbt, spark, folder):
    counts = {model: count(spark, table) for model, table in TABLES.items()}
    quarantined = count(spark, recompute.QUARANTINE_TABLE)

    result = dbt("run")

    assert result.success, failure_messages(result)
    every_layer_processed(result, 0, 0)
    assert {model: count(spark, table) for model, table in TABLES.items()} == counts
    assert count(spark, recompute.QUARANTINE_TABLE) == quarantined
    for table in ("bronze.bronze_recordings", "silver.silver_recordings"):
        distinct = spark.table(table).select("recording_id").distinct().count()
        assert distinct == counts[table.split(".")[1]], f"duplicates in {table}"


def test_complete_mode_gold_matches_recompute_after_each_landing(built, dbt, spark, folder):
    for records in (50, 75, 100):
        batch = land_batch(folder, records=records, files=1)
        result = dbt("run")
        assert result.success, failure_messages(result)
        assert rows_processed(result)["device_counts"] == batch.kept
        assert_gold_matches_recompute(spark, folder)


def test_patient_tables_equal_the_change_feed_applied_in_python(built, dbt, spark, folder, changes_folder):
    """The cdc_table models after each landing of patient changes (late and repeated ones among
    them), and every recording attributed to its patient's ward at the time (gold)."""
    assert recompute.cdc_mismatches(spark, changes_folder) == []
    for records in (30, 30):
        batch = land_batch(folder, records=records, files=1)
        land_patient_changes(batch.number, changes_folder)
        result = dbt("run")
        assert result.success, failure_messages(result)
        assert recompute.cdc_mismatches(spark, changes_folder) == []
        assert_gold_matches_recompute(spark, folder)
    assert spark.table("silver.patients").count() > 0
    attributed = spark.table("gold.recordings_with_patient_ward").where("patient_ward is not null")
    assert attributed.count() > 0


UNREADABLE_LINES = [
    '{"recording_id": "bad-1", "device_id": 1, "mrn": 100001, "time": 17',  # cut short
    "not json at all",
    '{"recording_id": "bad-3", "device_id": "three", "mrn": 100001, "time": 1767225600, '
    '"heartbeat": 70.0}',  # a string where an int belongs
]


def test_unreadable_lines_are_quarantined_and_counted_not_dropped(built, dbt, spark, folder):
    readable = land_batch(folder, records=4, files=1)
    bad_file = folder / "hand-written.json"
    bad_file.write_text("\n".join(UNREADABLE_LINES) + "\n")
    (folder / "empty.json").write_text("")
    quarantined_before = count(spark, "silver.quarantined_recordings")

    result = dbt("run")

    assert result.success, failure_messages(result)
    processed = rows_processed(result)
    assert processed["bronze_recordings"] == readable.records + len(UNREADABLE_LINES)
    assert processed["device_counts"] == readable.kept
    quarantined = spark.sql(
        "select source_file, raw_record from silver.quarantined_recordings "
        "where source_file like '%hand-written.json'"
    ).collect()
    assert sorted(row.raw_record for row in quarantined) == sorted(UNREADABLE_LINES)
    assert count(spark, "silver.quarantined_recordings") == quarantined_before + len(UNREADABLE_LINES)
    messages = {r.node.name: r.message for r in result.result.results}
    assert f", {len(UNREADABLE_LINES)} written" in messages["quarantined_recordings"]
    assert f", {readable.kept} written" in messages["silver_recordings"]
    assert_gold_matches_recompute(spark, folder)


def test_fields_outside_the_schema_are_rescued_not_dropped(built, dbt, spark, folder):
    (folder / "new-firmware.json").write_text(
        '{"recording_id": "fw-1", "device_id": 3, "mrn": 100002, "time": 1767229200, '
        '"heartbeat": 71.5, "battery": 87, "firmware": "2.1"}\n'
    )

    result = dbt("run")

    assert result.success, failure_messages(result)
    row = spark.sql(
        "select heartbeat, _rescued_data from bronze.bronze_recordings where recording_id = 'fw-1'"
    ).first()
    assert row.heartbeat == 71.5
    assert json.loads(row._rescued_data) == {"battery": 87, "firmware": "2.1"}  # 87 stays a number
    assert spark.table("silver.silver_recordings").where("recording_id = 'fw-1'").count() == 1
    ordinary = spark.table("bronze.bronze_recordings").where("recording_id like 'b%'")
    assert ordinary.where("_rescued_data is not null").count() == 0
    assert_gold_matches_recompute(spark, folder)


def test_each_model_has_a_checkpoint_of_its_own(built, lakehouse):
    for model, table in TABLES.items():
        schema, name = table.split(".")
        offsets = f"{lakehouse.checkpoints}/{schema}/{name}/offsets"
        assert os.listdir(offsets), f"{model} has no committed offsets in {offsets}"


def test_full_refresh_rebuilds_one_model_from_all_data(built, dbt, spark, folder):
    def version(table: str) -> int:
        return spark.sql(f"describe history {table}").agg({"version": "max"}).first()[0]

    untouched = {t: version(t) for t in TABLES.values() if t != "gold.device_counts"}
    silver_rows = count(spark, "silver.silver_recordings")

    result = dbt("run", "--full-refresh", "--select", "device_counts")

    assert result.success, failure_messages(result)
    assert rows_processed(result) == {"device_counts": silver_rows}
    assert version("gold.device_counts") == 1  # dropped and created anew (0), one batch (1)
    assert {t: version(t) for t in untouched} == untouched
    assert_gold_matches_recompute(spark, folder)

    # and it keeps going incrementally afterwards
    batch = land_batch(folder, records=40, files=1)
    result = dbt("run")
    assert rows_processed(result)["device_counts"] == batch.kept
    assert_gold_matches_recompute(spark, folder)
