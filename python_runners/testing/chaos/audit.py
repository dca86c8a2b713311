"""After the chaos: is every landed record in bronze exactly once, every record silver's
expectations keep in silver and the join exactly once, every implausible one in silver's
quarantine table exactly once (and a record from the future in neither), is gold right, and do
the patient tables (cdc_table, SCD1 and SCD2) equal the change feed applied in plain Python?

What landed is read from the landing files with plain Python, so the truth does not depend on
the engine under test.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import SparkSession

from python_runners.demo import recording_rules
from python_runners.testing import recompute

LAYERS = {
    "bronze": "bronze.bronze_recordings",
    "silver": "silver.silver_recordings",
    "joined": "silver.recordings_with_device_status",
    "quarantine": recompute.QUARANTINE_TABLE,
}


@dataclass(frozen=True)
class Audit:
    landed: int
    lost: int
    duplicated: int  # a record held more than once, or where it should not be
    gold_mismatches: list[str] = field(default_factory=list)
    cdc_mismatches: list[str] = field(default_factory=list)  # silver.patients, patient_ward_history
    changes_landed: int = 0  # patient change rows, repeats included
    per_layer: dict[str, tuple[int, int]] = field(default_factory=dict)  # layer: (lost, duplicated)
    quarantined: int = 0  # landed records silver's expectations quarantine
    dropped: int = 0  # and drop

    @property
    def passed(self) -> bool:
        return (self.lost == 0 and self.duplicated == 0 and not self.gold_mismatches
                and not self.cdc_mismatches)


def audit(spark: SparkSession, folder: Path, changes_folder: Path) -> Audit:
    landed = landed_recordings(folder)
    checked = recording_rules.check(landed)
    expected = expected_per_layer(landed, checked)
    per_layer = {
        layer: faults(expected[layer], stored_ids(spark, table)) for layer, table in LAYERS.items()
    }
    return Audit(
        landed=len(landed),
        lost=sum(lost for lost, _ in per_layer.values()),
        duplicated=sum(duplicated for _, duplicated in per_layer.values()),
        gold_mismatches=recompute.gold_mismatches(spark, folder, changes_folder),
        cdc_mismatches=recompute.cdc_mismatches(spark, changes_folder),
        changes_landed=len(recompute.landed_patient_changes(changes_folder)),
        per_layer=per_layer,
        quarantined=len(checked.quarantined),
        dropped=len(checked.dropped),
    )


def expected_per_layer(landed: list[dict], checked: recording_rules.Checked) -> dict[str, set[str]]:
    """The recording ids each layer must hold once each. Every landing brings its status reports,
    so after the final run each recording silver keeps is also in the stream-stream join."""
    kept = _ids(checked.kept)
    return {"bronze": _ids(landed), "silver": kept, "joined": kept, "quarantine": _ids(checked.quarantined)}


def stored_ids(spark: SparkSession, table: str) -> Counter:
    rows = spark.table(table).where("recording_id is not null").select("recording_id").collect()
    return Counter(row[0] for row in rows)


def faults(expected: set[str], stored: Counter) -> tuple[int, int]:
    """(lost, duplicated): expected ids missing; extra copies, and ids that should not be there."""
    lost = len(expected - stored.keys())
    duplicated = sum(n - 1 for n in stored.values()) + len(stored.keys() - expected)
    return lost, duplicated


def landed_recordings(folder: Path) -> list[dict]:
    rows: list[dict] = []
    for name in sorted(os.listdir(folder)):
        if name.startswith((".", "_")):
            continue  # not yet renamed into place, as Spark's file source also skips
        with open(folder / name, encoding="utf-8") as landed:
            rows.extend(json.loads(line) for line in landed if line.strip())
    if len(_ids(rows)) != len(rows):
        raise ValueError(f"{folder}: the generator landed a recording id twice")
    return rows


def _ids(rows) -> set[str]:
    return {row["recording_id"] for row in rows}
