"""What a served run reads a small batch as (serve/dataflow.py's served_conf): one read
partition, so one file a batch in the table it appends to, and in the table that streams from
that one. Spark's default splits the batch in one partition per core."""

from __future__ import annotations

import json
from pathlib import Path

from dbt_spark_streaming.jvm.session_settings import settings_for_now
from dbt_spark_streaming.serve.dataflow import served_conf


def _files_per_hop(spark, root: Path) -> tuple[int, int]:
    landing = root / "landing"
    landing.mkdir(parents=True)
    for part in range(4):  # a wave: a few small files
        rows = (json.dumps({"id": part * 100 + i}) for i in range(100))
        (landing / f"{part}.json").write_text("\n".join(rows))
    hops = ((lambda: spark.readStream.name("input").schema("id long").json(str(landing)), "bronze"),
            (lambda: spark.readStream.name("input").format("delta").load(str(root / "bronze")), "silver"))
    for source, target in hops:
        query = (source().writeStream.format("delta").option("checkpointLocation", str(root / f"{target}_cp"))
                 .trigger(availableNow=True).start(str(root / target)))
        query.awaitTermination()
    assert spark.read.format("delta").load(str(root / "silver")).count() == 400
    return tuple(len(list((root / table).glob("*.parquet"))) for table in ("bronze", "silver"))


def test_a_served_batch_of_small_files_is_one_file_in_each_hop(spark, tmp_path):
    assert spark.sparkContext.defaultParallelism > 1  # else Spark's default gives one already
    assert min(_files_per_hop(spark, tmp_path / "plain")) > 1
    with settings_for_now(spark, served_conf(spark)):
        assert _files_per_hop(spark, tmp_path / "served") == (1, 1)
