"""After the chaos: is every landed record in bronze, silver and the join exactly once, is gold
right, and do the patient tables (cdc_table, SCD1 and SCD2) equal the change feed applied in
plain Python?

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

from python_runners.testing import recompute

# Every landing brings its status reports, so after the final run each recording is also in the
# stream-stream join exactly once.
LAYERS = {
    "bronze": "bronze.bronze_recordings",
    "silver": "silver.silver_recordings",
    "joined": "silver.recordings_with_device_status",
}


@dataclass(frozen=True)
class Audit:
    landed: int
    lost: int
    duplicated: int
    gold_mismatches: list[str] = field(default_factory=list)
    cdc_mismatches: list[str] = field(default_factory=list)  # silver.patients, patient_ward_history
    changes_landed: int = 0  # patient change rows, repeats included
    per_layer: dict[str, tuple[int, int]] = field(default_factory=dict)  # layer: (lost, duplicated)

    @property
    def passed(self) -> bool:
        return (self.lost == 0 and self.duplicated == 0 and not self.gold_mismatches
                and not self.cdc_mismatches)


def audit(spark: SparkSession, folder: Path, changes_folder: Path) -> Audit:
    landed = landed_record_ids(folder)
    per_layer = {}
    for layer, table in LAYERS.items():
        stored = Counter(
            row[0] for row in spark.table(table).where("recording_id is not null")
            .select("recording_id").collect()
        )
        lost = len(landed - stored.keys())
        duplicated = sum(n - 1 for n in stored.values()) + len(stored.keys() - landed)
        per_layer[layer] = (lost, duplicated)
    return Audit(
        landed=len(landed),
        lost=sum(lost for lost, _ in per_layer.values()),
        duplicated=sum(duplicated for _, duplicated in per_layer.values()),
        gold_mismatches=recompute.gold_mismatches(spark, folder, changes_folder),
        cdc_mismatches=recompute.cdc_mismatches(spark, changes_folder),
        changes_landed=len(recompute.landed_patient_changes(changes_folder)),
        per_layer=per_layer,
    )


def landed_record_ids(folder: Path) -> set[str]:
    ids: list[str] = []
    for name in sorted(os.listdir(folder)):
        if name.startswith((".", "_")):
            continue  # not yet renamed into place, as Spark's file source also skips
        with open(folder / name, encoding="utf-8") as landed:
            ids.extend(json.loads(line)["recording_id"] for line in landed if line.strip())
    unique = set(ids)
    if len(unique) != len(ids):
        raise ValueError(f"{folder}: the generator landed a recording id twice")
    return unique
