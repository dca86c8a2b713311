"""`make run`: the device recordings pipeline, end to end, on the embedded lakehouse.

Lands a batch (recordings and the devices' status reports), builds everything (seed, bronze,
silver, gold, data tests), shows the gold tables, lands one more batch and runs again: the counts
move by exactly what was landed.
"""

from __future__ import annotations

from python_runners.ops.dbt_invocation import run_dbt
from python_runners.demo.data import land_batch, land_status_reports
from python_runners.runtime.lakehouse import Lakehouse
from python_runners.runtime.session import get_or_create_session


def show_gold(title: str) -> None:
    spark = get_or_create_session()
    print(f"\n== {title}: gold.device_counts ==")
    spark.table("gold.device_counts").orderBy("device_id").show(50, truncate=False)
    print("== gold.ward_heart_rates ==")
    spark.table("gold.ward_heart_rates").orderBy("ward").show(50, truncate=False)


def land(records: int = 200, files: int = 2) -> None:
    batch = land_batch(records=records, files=files)
    reports = land_status_reports(batch.number)
    print(f"Landed batch {batch.number}: {batch.records} recordings in {len(batch.files)} files, "
          f"{len(reports)} device status reports")


def main() -> None:
    lakehouse = Lakehouse.from_env()
    print(f"Lakehouse: {lakehouse.root}")
    land()
    run_dbt(["build"])
    show_gold("after `dbt build`")

    land()
    run_dbt(["run"])
    show_gold("after one more batch and `dbt run`")


if __name__ == "__main__":
    main()
