"""The key of a table's writer lock in the shared metastore (adapter/dbt_spark_streaming/jvm/table_writers.py)."""

from __future__ import annotations

from dbt_spark_streaming.jvm.table_writers import lock_key


def test_every_process_derives_the_same_64_bit_key_for_a_table_whatever_its_case():
    key = lock_key("silver.silver_recordings")
    assert key == lock_key("SILVER.Silver_Recordings")
    assert -2**63 <= key < 2**63


def test_tables_get_keys_of_their_own():
    names = [f"{schema}.{table}" for schema in ("bronze", "silver", "gold", "dev_ann_gold")
             for table in ("recordings", "device_counts", "patients", "_stream_progress")]
    assert len({lock_key(name) for name in names}) == len(names)
