"""`make run`: the device recordings pipeline, end to end, on the embedded lakehouse.

Lands a batch (recordings, the devices' status reports and the patients' ward changes), builds
everything (seed, bronze, silver, gold, data tests), shows the gold tables, the recordings silver's
expectations quarantined and the patients, lands one more batch and runs again: the counts move
by exactly what silver kept of what was landed, and recordings of the first batch whose patient's
admission landed late now have their ward.
"""

from __future__ import annotations

from python_runners.ops.dbt_invocation import run_dbt
from python_runners.demo.data import land_batch, land_status_reports
from python_runners.demo.patient_changes import land_patient_changes
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.session import get_or_create_session


def show_gold(title: str) -> None:
    spark = get_or_create_session()
    print(f"\n== {title}: gold.device_counts ==")
    spark.table("gold.device_counts").orderBy("device_id").show(50, truncate=False)
    print("== gold.ward_heart_rates ==")
    spark.table("gold.ward_heart_rates").orderBy("ward").show(50, truncate=False)
    show_quarantine()
    show_patients()


def show_quarantine() -> None:
    spark = get_or_create_session()
    held = spark.table("silver.silver_recordings__quarantine")
    print(f"== silver.silver_recordings__quarantine: {held.count()} recordings with an implausible "
          "heartbeat (first 5) ==")
    (held.select("recording_id", "device_id", "recorded_at", "heartbeat", "_failed_expectations")
     .orderBy("recording_id").show(5, truncate=False))


def show_patients() -> None:
    spark = get_or_create_session()
    admitted = spark.table("silver.patients")
    print(f"== silver.patients: {admitted.count()} admitted now (SCD1, first 10) ==")
    admitted.orderBy("mrn").show(10, truncate=False)
    stays = spark.table("silver.patient_ward_history")
    print(f"== silver.patient_ward_history: {stays.count()} stays (SCD2), the two patients "
          "with the most ==")
    most = [row.mrn for row in stays.groupBy("mrn").count().orderBy("count", "mrn", ascending=[False, True])
            .limit(2).collect()]
    (stays.where(stays.mrn.isin(most))
     .selectExpr("mrn", "ward", "__start_at.changed_at as start_at", "__start_at.lsn as start_lsn",
                 "__end_at.changed_at as end_at", "__end_at.lsn as end_lsn")
     .orderBy("mrn", "start_at").show(20, truncate=False))
    print("== gold.recordings_with_patient_ward: recordings per ward the patient was in ==")
    spark.sql(
        "select coalesce(patient_ward, '(not admitted)') as patient_ward, count(*) as recordings,"
        " count(distinct mrn) as patients,"
        " round(avg(heartbeat), 2) as avg_heartbeat"
        " from gold.recordings_with_patient_ward group by 1 order by 1"
    ).show(20, truncate=False)


def land(records: int = 200, files: int = 2) -> None:
    batch = land_batch(records=records, files=files)
    reports = land_status_reports(batch.number)
    changes = land_patient_changes(batch.number)
    checked = batch.checked
    print(f"Landed batch {batch.number}: {batch.records} recordings in {len(batch.files)} files "
          f"({len(checked.quarantined)} with an implausible heartbeat, {len(checked.dropped)} from "
          f"the future), {len(reports)} device status reports, {len(changes)} patient changes")


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
