"""`make run`: the device recordings pipeline, end to end, on the embedded lakehouse.

Lands a batch, builds everything (seed, bronze, silver, gold, data tests), shows the gold table,
lands one more batch and runs again: the counts move by exactly what was landed.
"""

from __future__ import annotations

from python_runners.dbt_invocation import run_dbt
from python_runners.demo_data import land_batch
from python_runners.lakehouse import Lakehouse
from python_runners.session import get_or_create_session


def show_gold(title: str) -> None:
    spark = get_or_create_session()
    print(f"\n== {title}: gold.device_counts ==")
    spark.table("gold.device_counts").orderBy("device_id").show(50, truncate=False)
    print("== gold.ward_heart_rates ==")
    spark.table("gold.ward_heart_rates").orderBy("ward").show(50, truncate=False)


def main() -> None:
    lakehouse = Lakehouse.from_env()
    print(f"Lakehouse: {lakehouse.root}")
    batch = land_batch()
    print(f"Landed batch {batch.number}: {batch.records} recordings in {len(batch.files)} files")
    run_dbt(["build"])
    show_gold("after `dbt build`")

    batch = land_batch()
    print(f"Landed batch {batch.number}: {batch.records} recordings in {len(batch.files)} files")
    run_dbt(["run"])
    show_gold("after one more batch and `dbt run`")


if __name__ == "__main__":
    main()
