"""Checks on the tables a benchmark wrote."""

from __future__ import annotations


def rows_only_in_each(spark, left: str, right: str) -> tuple[int, int]:
    """Rows of `left` not in `right` and of `right` not in `left` (duplicates counted, exceptAll)."""
    return (spark.table(left).exceptAll(spark.table(right)).count(),
            spark.table(right).exceptAll(spark.table(left)).count())
