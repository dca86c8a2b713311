"""The demo's data: batches of device recordings, and the devices' status reports, landing as JSON files.

Each call lands one new batch (several files) in the landing folder. Batches are numbered and
deterministic: batch n always holds the same records, so tests can recompute expected results.
A few records of a batch break silver_recordings' expectations, at fixed places: in every 50,
one has an implausible heartbeat (0, 900 or none: quarantined) and one a time in the year 2100
(a device clock gone wrong: dropped); devices 10 and 11 are not in the devices seed (warned).
`LandedBatch.checked` sorts a batch's records as silver does (demo/recording_rules.py).
A file is written under a hidden name first and then renamed, as a careful uploader does, so a
stream never sees half a file (python_runners.testing.landing).
"""

from __future__ import annotations

import os
import random
import re
from dataclasses import dataclass
from pathlib import Path

from python_runners.demo.recording_rules import Checked, check
from dbt_spark_streaming.lakehouse import Lakehouse
from python_runners.testing.landing import land_json_lines

RECORDINGS_FOLDER = "recordings"
STATUS_FOLDER = "device_status"
STATUS_EVERY_SECONDS = 600  # each device reports its status every 10 minutes, on the minute
RECORDING_SCHEMA = "recording_id string, device_id int, mrn bigint, time bigint, heartbeat double"
DEVICES = 12  # the devices seed knows 0-9; 10 and 11 are new devices not yet registered
PATIENTS = 40
FIRST_BATCH_EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z
FAR_FUTURE_EPOCH = 4_102_444_800  # 2100-01-01T00:00:00Z
BAD_RECORD_EVERY = 50
IMPLAUSIBLE_HEARTBEAT_AT = 7  # the record at this place in every BAD_RECORD_EVERY
FUTURE_TIME_AT = 31
IMPLAUSIBLE_HEARTBEATS = (0.0, 900.0, None)  # taken in turn
_BATCH_FILE = re.compile(r"^batch-(\d+)-part-\d+\.json$")


@dataclass(frozen=True)
class LandedBatch:
    number: int
    files: list[str]
    rows: tuple[dict, ...]

    @property
    def records(self) -> int:
        """Records landed: what bronze takes in."""
        return len(self.rows)

    @property
    def checked(self) -> Checked:
        return check(self.rows)

    @property
    def kept(self) -> int:
        """Records silver writes (and gold counts): those neither quarantined nor dropped."""
        return len(self.checked.kept)


def recordings_folder(lakehouse: Lakehouse | None = None) -> Path:
    return Path((lakehouse or Lakehouse.from_env()).landing_path(RECORDINGS_FOLDER))


def status_folder(lakehouse: Lakehouse | None = None) -> Path:
    return Path((lakehouse or Lakehouse.from_env()).landing_path(STATUS_FOLDER))


def land_batch(
    folder: Path | None = None, records: int = 200, files: int = 2
) -> LandedBatch:
    folder = folder or recordings_folder()
    folder.mkdir(parents=True, exist_ok=True)
    number = _next_batch_number(folder)
    rows = batch_records(number, records)
    written = []
    for part in range(files):
        name = f"batch-{number:05d}-part-{part}.json"
        land_json_lines(folder, name, rows[part::files])
        written.append(str(folder / name))
    return LandedBatch(number=number, files=written, rows=tuple(rows))


def batch_records(number: int, records: int) -> list[dict]:
    rng = random.Random(number)
    start = FIRST_BATCH_EPOCH + number * 3600
    rows = [
        {
            "recording_id": f"b{number:05d}-{i:06d}",
            "device_id": rng.randrange(DEVICES),
            "mrn": 100_000 + rng.randrange(PATIENTS),
            "time": start + rng.randrange(3600),
            "heartbeat": round(min(180.0, max(40.0, rng.gauss(76, 12))), 1),
        }
        for i in range(records)
    ]
    for i in range(IMPLAUSIBLE_HEARTBEAT_AT, records, BAD_RECORD_EVERY):
        turn = number + i // BAD_RECORD_EVERY
        rows[i]["heartbeat"] = IMPLAUSIBLE_HEARTBEATS[turn % len(IMPLAUSIBLE_HEARTBEATS)]
    for i in range(FUTURE_TIME_AT, records, BAD_RECORD_EVERY):
        rows[i]["time"] += FAR_FUTURE_EPOCH - FIRST_BATCH_EPOCH
    return rows


def land_status_reports(number: int, folder: Path | None = None) -> list[dict]:
    """The status reports every device sent during recordings batch `number`'s hour, as one file."""
    folder = folder or status_folder()
    folder.mkdir(parents=True, exist_ok=True)
    reports = batch_status_reports(number)
    land_json_lines(folder, f"status-{number:05d}.json", reports)
    return reports


def batch_status_reports(number: int) -> list[dict]:
    rng = random.Random(-1 - number)
    start = FIRST_BATCH_EPOCH + number * 3600
    return [
        {
            "device_id": device,
            "time": start + offset,
            "battery_pct": rng.randrange(5, 101),
            "signal": rng.choice(["strong", "weak"]),
        }
        for offset in range(0, 3600, STATUS_EVERY_SECONDS)
        for device in range(DEVICES)
    ]


def _next_batch_number(folder: Path) -> int:
    numbers = [int(m.group(1)) for m in map(_BATCH_FILE.match, os.listdir(folder)) if m]
    return max(numbers, default=-1) + 1

