"""Rows appended to a benchmark's source table: one history batch, then small changed batches."""

from __future__ import annotations

import random
from dataclasses import dataclass

from pyspark.sql import SparkSession

SOURCE_SCHEMA = "key bigint, value bigint"
MAX_VALUE = 100
NEW_KEY_SHARE = 0.01  # of a changed batch's rows; the rest touch existing keys


@dataclass(frozen=True)
class ChangedBatchShape:
    rows: int

    @property
    def new_keys(self) -> int:
        return max(1, round(self.rows * NEW_KEY_SHARE))

    @property
    def existing_keys(self) -> int:
        return self.rows - self.new_keys


def append_history(spark: SparkSession, table: str, keys: int) -> None:
    """One row for every key 0..keys-1: builds the aggregate's state, not measured."""
    rows = spark.range(keys).selectExpr("id as key", f"id % {MAX_VALUE} as value")
    rows.write.format("delta").mode("append").saveAsTable(table)


def append_changed(
    spark: SparkSession, table: str, shape: ChangedBatchShape, known_keys: int, rng: random.Random
) -> int:
    """Rows for distinct existing keys drawn at random plus a few new keys; returns the keys now known.

    Keys are 0..known_keys-1, so new keys continue from known_keys.
    """
    touched = rng.sample(range(known_keys), min(shape.existing_keys, known_keys))
    touched += range(known_keys, known_keys + shape.new_keys)
    rows = [(key, rng.randrange(MAX_VALUE)) for key in touched]
    spark.createDataFrame(rows, SOURCE_SCHEMA).write.format("delta").mode("append").saveAsTable(table)
    return known_keys + shape.new_keys
