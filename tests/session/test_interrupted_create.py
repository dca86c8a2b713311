"""A run killed while creating a model's table: the next run creates it again.

Creating a managed Delta table writes its first commit, then registers the table in the
metastore; a kill in between leaves the location holding only that creation.
"""

from __future__ import annotations

import pytest
from delta.tables import DeltaTable

from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.jvm import checkpoint_log, hadoop_fs
from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.lifecycle import checkpoint_names

SCHEMA = "interrupted"


@pytest.fixture
def table(spark):
    spark.sql(f"create schema if not exists {SCHEMA}")
    name = f"{SCHEMA}.events"
    yield name
    delta_tables.drop_if_exists(spark, name)
    hadoop_fs.delete(spark, delta_tables.default_location(spark, name))


def test_a_location_left_by_an_interrupted_create_is_created_again(spark, table):
    schema = spark.range(1).selectExpr("id", "'x' as label").schema
    location = delta_tables.default_location(spark, table)
    DeltaTable.create(spark).location(location).addColumns(schema).execute()
    assert not spark.catalog.tableExists(table)

    delta_tables.create_if_missing(spark, table, schema)

    assert spark.catalog.tableExists(table)
    described = spark.sql(f"describe detail {table}").first()
    assert described["location"] == location
    assert spark.sql(f"describe extended {table}").where("col_name = 'Type'").first()[1] == "MANAGED"


def test_a_location_with_data_but_no_table_is_not_deleted(spark, table):
    location = delta_tables.default_location(spark, table)
    spark.range(3).write.format("delta").save(location)

    with pytest.raises(StreamingModelError, match="holds data") as error:
        delta_tables.create_if_missing(spark, table, spark.range(1).schema)

    assert location in str(error.value)
    assert spark.read.format("delta").load(location).count() == 3


def test_a_first_offsets_entry_a_kill_left_unrenamed_is_cleared_and_the_query_starts(spark, tmp_path, monkeypatch):
    """On an object store Spark's rename of a checkpoint entry is a copy after the upload; a
    kill between leaves `offsets/.0.<uuid>.tmp` alone, and batch 0 then never starts again."""
    source, target = str(tmp_path / "source"), str(tmp_path / "target")
    spark.range(3).write.format("delta").save(source)
    checkpoint = tmp_path / "checkpoint"
    (checkpoint / "offsets").mkdir(parents=True)
    left = ".0.035d3668-60d6-43d4-a26d-a2d4e66cc4f2.tmp"
    (checkpoint / "offsets" / left).write_text('v1\n{"batchWatermarkMs":0}\n')

    def run() -> None:
        (spark.readStream.name("input").format("delta").load(source).writeStream.format("delta")
         .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start(target)
         .awaitTermination())

    with pytest.raises(Exception, match="STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY"):
        run()
    assert checkpoint_log.clear_unfinished_first_entry(spark, str(checkpoint)) == [left]
    run()
    assert spark.read.format("delta").load(target).count() == 3
    # With an entry there, a temporary file is a later batch's and harms nothing: left as it is.
    (checkpoint / "offsets" / left).write_text("v1\n")
    assert checkpoint_log.clear_unfinished_first_entry(spark, str(checkpoint)) == []

    # Once this process has found the checkpoint ready, a query's start does not list its offsets.
    checkpoint_names.prepare_before_start(spark, "model", str(checkpoint), lambda: pytest.fail("named already"))
    monkeypatch.setattr(hadoop_fs, "list_names", lambda *args: pytest.fail("listed a ready checkpoint's offsets"))
    checkpoint_names.clear_unfinished_first_entry(spark, str(checkpoint))
