"""The benchmark's procedure for one shape and key count, and the check that every variant's table agrees."""

from __future__ import annotations

import random
from typing import Sequence

from pyspark.sql import SparkSession

from bench.harness.catch_up import timed_catch_up
from bench.harness.tables import rows_only_in_each
from bench.modes.batch_shapes import BatchShape
from bench.modes.key_totals_model import COMPLETE, KeyTotalsModel, Variant
from bench.modes.mode_results import ModeResults
from bench.modes.source_batches import ChangedBatchShape
from dbt_spark_streaming.lakehouse import Lakehouse


def measure_size(
    spark: SparkSession, lakehouse: Lakehouse, shape: BatchShape, keys: int,
    variants: Sequence[Variant], rows_per_batch: int, batches: int, rng: random.Random,
) -> list[ModeResults]:
    model = KeyTotalsModel(shape, keys)
    writes = {variant.name: model.streaming_write(lakehouse, variant) for variant in variants}
    results = {variant.name: ModeResults(shape.name, keys, variant.name) for variant in variants}

    for step, append in enumerate(shape.history_steps(spark, model.source_table, keys)):
        append()
        if step == 0:
            model.register_views(spark)
        for variant in variants:
            results[variant.name].state_build.append(timed_catch_up(spark, writes[variant.name]))

    changed = ChangedBatchShape(rows_per_batch)
    known_keys = keys
    for batch in range(batches):
        known_keys = shape.append_changed(spark, model.source_table, changed, known_keys, rng)
        # Alternate the order, so no variant always runs right after the same other one (GC, caches).
        for variant in variants if batch % 2 == 0 else reversed(variants):
            results[variant.name].measured.append(timed_catch_up(spark, writes[variant.name]))
    return [results[variant.name] for variant in variants]


def differences_from_complete(
    spark: SparkSession, shape: BatchShape, keys: int, variants: Sequence[Variant]
) -> list[str]:
    """What differs between each variant's table and complete mode's; empty when all agree."""
    model = KeyTotalsModel(shape, keys)
    complete = model.target_table(COMPLETE)
    return [
        difference for variant in variants if variant != COMPLETE
        for difference in [same_rows_both_ways(spark, model.target_table(variant), complete)]
        if difference
    ]


def same_rows_both_ways(spark: SparkSession, left: str, right: str) -> str | None:
    """None when the tables hold the same rows (duplicates counted); otherwise what differs."""
    left_only, right_only = rows_only_in_each(spark, left, right)
    if left_only or right_only:
        return f"{left_only} rows only in {left}, {right_only} rows only in {right}"
    return None
