"""A watermark on a stream(...) read that carries options (stream_changes, stream_appends, a
checkpoint reset's starting version): the options reach the read, the watermark its view."""

from __future__ import annotations

from dbt_spark_streaming.config.event_time import Watermark, with_watermarks
from dbt_spark_streaming.config.stream_reads import stream_options

TABLE = "watermarked_inputs.readings"


def test_options_after_a_stream_read_reach_the_watermarked_read(spark):
    spark.sql("create schema if not exists watermarked_inputs")
    spark.sql(f"create or replace table {TABLE} (id int, at timestamp) using delta "
              "tblproperties ('delta.enableChangeDataFeed' = 'true')")
    spark.sql(f"insert into {TABLE} values (1, timestamp'2026-01-01 00:00:00')")
    spark.sql(f"insert into {TABLE} values (2, timestamp'2026-01-01 00:05:00')")
    watermark = Watermark.list_from_config("m", {"column": "at", "delay": "10 minutes"})

    sql = with_watermarks(
        spark, "m",
        f"select id, at, _change_type from stream({TABLE}) with ('readChangeFeed' = 'true', "
        f"'startingVersion' = '2') where id > 0",
        watermark,
    )
    frame = spark.sql(sql)

    assert frame.isStreaming and "_change_type" in frame.columns  # the change feed was read
    assert "EventTimeWatermark" in frame._jdf.queryExecution().analyzed().toString()
    query = frame.writeStream.format("memory").queryName("watermarked_changes").trigger(availableNow=True).start()
    query.awaitTermination()
    assert [row.id for row in spark.table("watermarked_changes").collect()] == [2]  # from version 2


def test_stream_options_are_read_whatever_the_quoting():
    assert stream_options("'readChangeFeed' = 'true', \"startingVersion\"=\"3\", skipChangeCommits = true") == {
        "readChangeFeed": "true", "startingVersion": "3", "skipChangeCommits": "true",
    }
