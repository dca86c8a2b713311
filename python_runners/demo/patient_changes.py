"""The demo's change data capture feed: patients admitted to, transferred between and discharged
from the wards, as the hospital's patient system logs it, landing as JSON change rows.

Each change row: `mrn` (the patient), `ward`, `op` ('I' admit, 'U' transfer, 'D' discharge: the
ward left), `lsn` (the system's log sequence number, increasing over the whole feed) and
`changed_at` (epoch seconds). The changes of batch n happen during the hour of recordings batch n
(FIRST_BATCH_EPOCH + n*3600 .. +3600), the same patients (mrn 100000..100039), the wards of the
devices seed. Within the feed, lsn order is changed_at order (a log numbers its changes as they
happen; no two changes share a second), so a patient's ward is well defined at every moment.

Delivery is imperfect, as CDC feeds are: batch 0 admits every patient; later batches transfer,
discharge and readmit a few, one patient twice in the batch. About a quarter of the changes land
one or two batches late (after newer changes of the same patient), and some are delivered twice
(in the same file, or in the next). Deterministic: batch n always generates and lands the same
rows, so the expected tables can be worked out from the landed files
(python_runners.testing.cdc_reference).
"""

from __future__ import annotations

import csv
import random
from dataclasses import dataclass
from pathlib import Path

from python_runners.demo.data import FIRST_BATCH_EPOCH, PATIENTS
from dbt_spark_streaming.lakehouse import Lakehouse
from python_runners import REPO_ROOT
from python_runners.testing.landing import land_json_lines

PATIENT_CHANGES_FOLDER = "patient_changes"
FIRST_MRN = 100_000
ADMIT, TRANSFER, DISCHARGE = "I", "U", "D"
CHANGES_PER_BATCH = 8  # after batch 0, which admits every patient
DISCHARGE_CHANCE = 0.25  # of a change to an admitted patient; else a transfer
LATE_BY_ONE, LATE_BY_TWO = 0.15, 0.10  # chances that a change lands 1 or 2 batches late
REPEAT_CHANCE = 0.10  # that a change is delivered a second time
_MOST_LATE = 3  # a change lands at most 2 batches late, and its repeat one batch after that


def _seed_wards() -> tuple[str, ...]:
    with open(REPO_ROOT / "seeds" / "devices.csv", encoding="utf-8") as seed:
        return tuple(sorted({row["ward"] for row in csv.DictReader(seed)}))


WARDS = _seed_wards()


@dataclass(frozen=True)
class Delivered:
    """A change, the batch it lands with, and the batch that delivers it again (if any)."""

    row: dict
    lands_in: int
    repeated_in: int | None


def patient_changes_folder(lakehouse: Lakehouse | None = None) -> Path:
    return Path((lakehouse or Lakehouse.from_env()).landing_path(PATIENT_CHANGES_FOLDER))


def land_patient_changes(number: int, folder: Path | None = None) -> list[dict]:
    """The change rows that land with recordings batch `number`, as one file."""
    folder = folder or patient_changes_folder()
    rows = batch_patient_changes(number)
    land_json_lines(folder, f"changes-{number:05d}.json", rows)
    return rows


def batch_patient_changes(number: int) -> list[dict]:
    """What lands with batch `number`: its own changes that are on time, the late ones of the
    two batches before, and repeats; late changes after the on-time ones, repeats last."""
    arriving = [
        delivered for earlier in range(max(0, number - _MOST_LATE), number + 1)
        for delivered in _delivered(earlier)
    ]
    on_time = [d.row for d in arriving if d.lands_in == number and d.row["changed_at"] >= _hour(number)]
    late = [d.row for d in arriving if d.lands_in == number and d.row["changed_at"] < _hour(number)]
    repeats = [d.row for d in arriving if d.repeated_in == number]
    return [*on_time, *late, *repeats]


def generated_changes(number: int) -> list[dict]:
    """The changes that happened during batch `number`'s hour, in lsn order."""
    return [dict(delivered.row) for delivered in _delivered(number)]


def _hour(number: int) -> int:
    return FIRST_BATCH_EPOCH + number * 3600


def _delivered(number: int) -> list[Delivered]:
    rng = random.Random(2_000_000 + number)
    delivered = []
    for row in _history(number):
        late = rng.random()
        lands_in = number + (2 if late < LATE_BY_TWO else 1 if late < LATE_BY_TWO + LATE_BY_ONE else 0)
        repeated_in = lands_in + rng.choice((0, 1)) if rng.random() < REPEAT_CHANCE else None
        delivered.append(Delivered(row, lands_in, repeated_in))
    return delivered


# Each batch's changes depend on where every patient was at its start: worked out batch after
# batch from batch 0, once per process.
_batches: list[list[dict]] = []
_wards_after: list[dict[int, str | None]] = []


def _history(number: int) -> list[dict]:
    while len(_batches) <= number:
        before = _wards_after[-1] if _wards_after else dict.fromkeys(_patients())
        changes, after = _simulate(len(_batches), before)
        _batches.append(changes)
        _wards_after.append(after)
    return _batches[number]


def _patients() -> range:
    return range(FIRST_MRN, FIRST_MRN + PATIENTS)


def _simulate(number: int, wards: dict[int, str | None]) -> tuple[list[dict], dict[int, str | None]]:
    rng = random.Random(1_000_000 + number)
    wards = dict(wards)
    if number == 0:  # every patient admitted during the first half hour
        mrns = list(_patients())
        offsets = sorted(rng.sample(range(1800), len(mrns)))
        rng.shuffle(mrns)
    else:  # a few changes; the first patient changes twice
        offsets = sorted(rng.sample(range(3600), CHANGES_PER_BATCH))
        mrns = [rng.choice(_patients()) for _ in offsets]
        mrns[rng.randrange(1, len(mrns))] = mrns[0]
    changes = []
    for index, (offset, mrn) in enumerate(zip(offsets, mrns)):
        current = wards[mrn]
        if current is None:
            op, ward = ADMIT, rng.choice(WARDS)
            wards[mrn] = ward
        elif rng.random() < DISCHARGE_CHANCE:
            op, ward = DISCHARGE, current  # the ward the patient left
            wards[mrn] = None
        else:
            op, ward = TRANSFER, rng.choice([w for w in WARDS if w != current])
            wards[mrn] = ward
        changes.append({
            "mrn": mrn, "ward": ward, "op": op,
            "lsn": number * 1000 + index + 1, "changed_at": _hour(number) + offset,
        })
    return changes, wards
