"""A table's snapshot (delta/tables.py) read from its latest checksum file says what Delta's own
log handle says, and a table whose latest commit has no checksum is read through Delta."""

from __future__ import annotations

from pathlib import Path

from dbt_spark_streaming.delta import tables


def test_the_checksum_and_deltas_log_agree(spark):
    spark.sql("create database if not exists snapshots")
    spark.sql("drop table if exists snapshots.kept")
    spark.sql("create table snapshots.kept (id bigint) using delta tblproperties ('streaming.generation' = '3')")
    spark.range(5).write.format("delta").mode("append").saveAsTable("snapshots.kept")
    spark.sql("alter table snapshots.kept set tblproperties ('streaming.query_sql' = 'select 1')")

    from_checksum = tables.snapshot(spark, "snapshots.kept")
    from_delta = tables.snapshot(spark, "snapshots.kept", tables.log_handle(spark, "snapshots.kept"))
    assert from_checksum.log is None  # no log handle opened
    assert (from_checksum.version, from_checksum.table_id, dict(from_checksum.properties)) == (
        from_delta.version, from_delta.table_id, dict(from_delta.properties))
    assert from_checksum.version == 2 and from_checksum.properties["streaming.query_sql"] == "select 1"
    assert from_checksum.refreshed(spark, "snapshots.kept").log is not None  # to read its commits

    location = tables.catalog_location(spark, "snapshots.kept")
    checksum = Path(location.removeprefix("file:")) / "_delta_log" / f"{2:020d}.crc"
    checksum.unlink()
    without = tables.snapshot(spark, "snapshots.kept")
    assert without.log is not None and without.version == 2 and without.table_id == from_delta.table_id
    assert not tables.snapshot(spark, "snapshots.missing").exists
