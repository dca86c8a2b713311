"""The load log of a copy_into model: which files it loaded, in which load, and whether that load
reached the table. A Delta table of its own, so it survives crashes the way the data does.

One row per file per load. A load is first *planned* (its rows appended, `loaded_at` null), then
written to the target table, then marked *loaded* (`loaded_at` set). A crash leaves at most one
planned load unmarked; the next run writes exactly that load again under the same Delta
transaction version, which Delta skips if the first attempt had already committed it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from delta.tables import DeltaTable
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from dbt_spark_streaming.jvm.hadoop_fs import DataFile

SCHEMA = (
    "load_id bigint, file_path string, file_size bigint, file_modification_time timestamp, "
    "forced boolean, planned_at timestamp, loaded_at timestamp, rows_loaded bigint"
)


@dataclass(frozen=True)
class Load:
    load_id: int
    files: tuple[DataFile, ...]
    forced: bool
    loaded: bool


class LoadLog:
    """The log at `location`, a path-based Delta table (query it with delta.`<location>`)."""

    def __init__(self, spark: SparkSession, location: str):
        self.spark = spark
        self.location = location

    def exists(self) -> bool:
        return DeltaTable.isDeltaTable(self.spark, self.location)

    def create_if_missing(self) -> None:
        if not self.exists():
            DeltaTable.createIfNotExists(self.spark).location(self.location).addColumns(
                self.spark.createDataFrame([], SCHEMA).schema
            ).execute()

    def transaction_app_id(self) -> str:
        """The id Delta gave the log when it was created: new with every new log, so a load
        numbered 0 in a new log is never mistaken for a replay of an old log's load 0."""
        return "copy_into-" + DeltaTable.forPath(self.spark, self.location).detail().first()["id"]

    def loads(self) -> list[Load]:
        if not self.exists():
            return []
        rows = self.spark.read.format("delta").load(self.location).collect()
        by_id: dict[int, list] = {}
        for row in rows:
            by_id.setdefault(row["load_id"], []).append(row)
        return [
            Load(
                load_id=load_id,
                files=tuple(
                    DataFile(r["file_path"], int(r["file_modification_time"].timestamp() * 1000),
                             r["file_size"])
                    for r in sorted(file_rows, key=lambda r: r["file_path"])
                ),
                forced=file_rows[0]["forced"],
                loaded=file_rows[0]["loaded_at"] is not None,
            )
            for load_id, file_rows in sorted(by_id.items())
        ]

    def plan(self, load_id: int, files: Sequence[DataFile], forced: bool) -> Load:
        rows = [
            (load_id, f.path, f.size, f.modification_time_ms / 1000.0, forced)
            for f in files
        ]
        (
            self.spark.createDataFrame(
                rows, "load_id bigint, file_path string, file_size bigint, mtime double, forced boolean"
            )
            .select(
                "load_id", "file_path", "file_size",
                F.col("mtime").cast("timestamp").alias("file_modification_time"), "forced",
                F.current_timestamp().alias("planned_at"),
                F.lit(None).cast("timestamp").alias("loaded_at"),
                F.lit(None).cast("bigint").alias("rows_loaded"),
            )
            .write.format("delta").mode("append").save(self.location)
        )
        return Load(load_id, tuple(files), forced, loaded=False)

    def mark_loaded(self, load_id: int, rows_loaded: int) -> None:
        DeltaTable.forPath(self.spark, self.location).update(
            condition=F.col("load_id") == load_id,
            set={"loaded_at": F.current_timestamp(), "rows_loaded": F.lit(rows_loaded)},
        )
