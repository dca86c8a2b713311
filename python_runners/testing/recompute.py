"""Expected results, computed in batch from everything that landed: the truth streams must match.

Silver's expectations are applied in plain Python (demo/recording_rules.py): silver and gold hold
the readable recordings that are neither quarantined nor dropped. The patient tables (cdc_table
models) and the ward each recording is attributed to are worked out in plain Python from the
landed change files (testing.cdc_reference), not by the engine.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from python_runners.demo import recording_rules
from python_runners.demo.data import RECORDING_SCHEMA
from python_runners.demo.patient_changes import DISCHARGE, PATIENT_CHANGES_FOLDER
from dbt_spark_streaming.config.expectations import FAILED_COLUMN
from python_runners.testing.cdc_reference import scd1, scd2

QUARANTINE_TABLE = "silver.silver_recordings__quarantine"
DEVICE_COUNT_COLUMNS = ["device_id", "total_recordings"]
WARD_COLUMNS = [
    "ward", "total_recordings", "patients", "avg_heartbeat", "min_heartbeat", "max_heartbeat"
]
# Averages are rounded to 2 places after sums taken in a different order: equal within 0.01.
AVERAGE_TOLERANCE = 0.0101
# The cdc_table models' settings (models/silver/patients.sql, patient_ward_history.sql).
PATIENT_KEYS = ["mrn"]
PATIENTS_SEQUENCE = ["lsn"]
PATIENTS_COLUMNS = ["mrn", "ward", "lsn", "changed_at"]
HISTORY_SEQUENCE = ["changed_at", "lsn"]
HISTORY_STORED = ["mrn", "ward"]


def readable_recordings(spark: SparkSession, folder) -> DataFrame:
    """Every readable recording landed so far (unreadable lines are quarantined_recordings')."""
    frame = (
        spark.read.schema(f"{RECORDING_SCHEMA}, _corrupt_record string")
        .option("columnNameOfCorruptRecord", "_corrupt_record")
        .json(str(folder))
    )
    return frame.where("_corrupt_record is null").drop("_corrupt_record")


def checked_recordings(spark: SparkSession, folder) -> recording_rules.Checked:
    """The readable recordings as silver's expectations sort them: kept, dropped, quarantined."""
    return _checked(readable_recordings(spark, folder))


def kept_recordings(spark: SparkSession, folder) -> DataFrame:
    """The recordings silver writes: readable, and neither quarantined nor dropped."""
    readable = readable_recordings(spark, folder)
    return spark.createDataFrame(list(_checked(readable).kept), readable.schema)


def _checked(readable: DataFrame) -> recording_rules.Checked:
    # Every column collected: the JSON reader parses only the columns a query uses, so a value of
    # the wrong type in one left out (device_id) would not mark its line as corrupt.
    return recording_rules.check(readable.collect())


def expected_quarantine(spark: SparkSession, folder) -> list[tuple[str, list[str]]]:
    """silver_recordings' quarantine table as (recording_id, the rules the recording failed)."""
    return sorted(
        (row["recording_id"], recording_rules.failed_rules(row))
        for row in checked_recordings(spark, folder).quarantined
    )


def quarantine_rows(spark: SparkSession) -> list[tuple[str, list[str]]]:
    frame = spark.table(QUARANTINE_TABLE).select("recording_id", FAILED_COLUMN)
    return sorted((row[0], list(row[1])) for row in frame.collect())


def device_counts(spark: SparkSession, folder) -> list[tuple]:
    frame = kept_recordings(spark, folder).groupBy("device_id").agg(F.count("*").alias("n"))
    return sorted(tuple(row) for row in frame.collect())


def ward_heart_rates(spark: SparkSession, folder) -> list[tuple]:
    devices = spark.table("reference.devices")
    frame = (
        kept_recordings(spark, folder)
        .join(devices, "device_id", "left")
        .groupBy(F.coalesce("ward", F.lit("unknown")).alias("ward"))
        .agg(
            F.count("*"),
            F.approx_count_distinct("mrn"),
            F.round(F.avg("heartbeat"), 2),
            F.min("heartbeat"),
            F.max("heartbeat"),
        )
    )
    return sorted(tuple(row) for row in frame.collect())


def table_rows(spark: SparkSession, table: str, columns: list[str]) -> list[tuple]:
    return sorted(tuple(row) for row in spark.table(table).select(*columns).collect())


def gold_mismatches(spark: SparkSession, folder, changes_folder=None) -> list[str]:
    """The gold tables that differ from a batch recompute over the landed files, with both sides.
    `folder`: the recordings' landing folder; `changes_folder`: the patient changes' (by
    default its sibling, as the demo lands them)."""
    mismatches = []
    streamed = sorted(
        table_rows(spark, "gold.recordings_with_patient_ward", ["recording_id", "patient_ward"]),
        key=_sortable,
    )
    expected = patient_wards(spark, folder, landed_patient_changes(changes_folder or beside(folder)))
    if streamed != expected:
        mismatches.append(
            f"gold.recordings_with_patient_ward: {_difference(streamed, expected)}"
        )
    streamed = table_rows(spark, "gold.device_counts", DEVICE_COUNT_COLUMNS)
    expected = device_counts(spark, folder)
    if streamed != expected:
        mismatches.append(f"gold.device_counts: {streamed} != recomputed {expected}")
    streamed = table_rows(spark, "gold.ward_heart_rates", WARD_COLUMNS)
    expected = ward_heart_rates(spark, folder)
    if not _rows_match(streamed, expected, average_column=3):
        mismatches.append(f"gold.ward_heart_rates: {streamed} != recomputed {expected}")
    return mismatches


def _rows_match(streamed: list[tuple], expected: list[tuple], average_column: int) -> bool:
    if len(streamed) != len(expected):
        return False
    for got, want in zip(streamed, expected):
        without = lambda row: row[:average_column] + row[average_column + 1:]  # noqa: E731
        if without(got) != without(want):
            return False
        if abs(got[average_column] - want[average_column]) > AVERAGE_TOLERANCE:
            return False
    return True


def beside(recordings_folder) -> Path:
    """The patient changes' landing folder beside the recordings' (both under the landing folder)."""
    return Path(recordings_folder).parent / PATIENT_CHANGES_FOLDER


def landed_patient_changes(folder) -> list[dict]:
    """Every readable change row landed so far, read with plain Python (no folder: none)."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    changes = []
    for name in sorted(os.listdir(folder)):
        if name.startswith((".", "_")):
            continue  # not yet renamed into place, as Spark's file source also skips
        with open(folder / name, encoding="utf-8") as landed:
            for line in landed:
                if line.strip():
                    try:
                        changes.append(json.loads(line))
                    except json.JSONDecodeError:
                        continue  # an unreadable line: silver leaves it out too
    return changes


def is_discharge(change) -> bool:
    return change["op"] == DISCHARGE


def expected_patients(changes: list[dict]) -> list[tuple]:
    """silver.patients as (mrn, ward, lsn, changed_at epoch seconds)."""
    rows = scd1(changes, PATIENT_KEYS, PATIENTS_SEQUENCE, is_discharge, PATIENTS_COLUMNS)
    return sorted(tuple(row[column] for column in PATIENTS_COLUMNS) for row in rows)


def expected_ward_history(changes: list[dict]) -> list[tuple]:
    """silver.patient_ward_history as (mrn, ward, (changed_at, lsn), (changed_at, lsn) or None)."""
    rows = scd2(changes, PATIENT_KEYS, HISTORY_SEQUENCE, is_discharge, HISTORY_STORED)
    return sorted(
        ((row["mrn"], row["ward"], row["__start_at"], row["__end_at"]) for row in rows), key=_sortable
    )


def patients_rows(spark: SparkSession) -> list[tuple]:
    frame = spark.table("silver.patients").selectExpr(
        "mrn", "ward", "lsn", "unix_seconds(changed_at) as changed_at"
    )
    return sorted(tuple(row) for row in frame.collect())


def ward_history_rows(spark: SparkSession) -> list[tuple]:
    frame = spark.table("silver.patient_ward_history").selectExpr(
        "mrn", "ward",
        "unix_seconds(__start_at.changed_at) as start_changed_at", "__start_at.lsn as start_lsn",
        "unix_seconds(__end_at.changed_at) as end_changed_at", "__end_at.lsn as end_lsn",
    )
    rows = [
        (row.mrn, row.ward, (row.start_changed_at, row.start_lsn),
         None if row.end_lsn is None else (row.end_changed_at, row.end_lsn))
        for row in frame.collect()
    ]
    return sorted(rows, key=_sortable)


def cdc_mismatches(spark: SparkSession, changes_folder) -> list[str]:
    """silver.patients and silver.patient_ward_history where they differ from the reference
    worked out from every landed change file, with what differs."""
    changes = landed_patient_changes(changes_folder)
    mismatches = []
    for table, stored, expected in (
        ("silver.patients", patients_rows(spark), expected_patients(changes)),
        ("silver.patient_ward_history", ward_history_rows(spark), expected_ward_history(changes)),
    ):
        if stored != expected:
            mismatches.append(f"{table}: {_difference(stored, expected)}")
    return mismatches


def patient_wards(spark: SparkSession, folder, changes: list[dict]) -> list[tuple]:
    """(recording_id, ward) of every recording in silver: the ward its patient was in at the
    recording's time by the reference history (None: not admitted then)."""
    stays: dict[int, list[tuple]] = {}
    for mrn, ward, (start, _), end in expected_ward_history(changes):
        stays.setdefault(mrn, []).append((start, None if end is None else end[0], ward))
    expected = []
    for row in checked_recordings(spark, folder).kept:
        wards = [
            ward for start, end, ward in stays.get(row.mrn, [])
            if start <= row.time and (end is None or row.time < end)
        ]
        if len(wards) > 1:
            raise ValueError(f"the reference history has overlapping stays for mrn {row.mrn}")
        expected.append((row.recording_id, wards[0] if wards else None))
    return sorted(expected, key=_sortable)


def _sortable(row: tuple) -> tuple:
    """Rows with None sorted after values, as tuples with None cannot be compared."""
    return tuple((value is None, value if value is not None else 0) for value in row)


def _difference(stored: list[tuple], expected: list[tuple]) -> str:
    missing = sorted((Counter(expected) - Counter(stored)).elements(), key=_sortable)
    extra = sorted((Counter(stored) - Counter(expected)).elements(), key=_sortable)
    return (f"{len(stored)} rows, expected {len(expected)}; missing {missing[:10]}"
            f"{' ...' if len(missing) > 10 else ''}; unexpected {extra[:10]}"
            f"{' ...' if len(extra) > 10 else ''}")
