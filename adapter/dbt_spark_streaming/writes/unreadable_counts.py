"""Unreadable lines a model reads, counted as they enter its query, and said on its run line.

A line Spark cannot parse from a json or csv source comes through as a row with the source's
corrupt-record column (`_corrupt_record`) set. A model that does not name that column never sees
such rows: they go to its quarantine, counted there (sources/corrupt_lines.py). A model that keeps
the column (`select *`: a bronze model), filters on it, or reads a table that carries it (a
silver model over such a bronze, `where _corrupt_record is null`) does see them. So each of its
streaming inputs with such a column is observed: Spark reports each batch's count of the rows
with it set (observedMetrics, under config.sources.UNREADABLE_OBSERVATION_PREFIX), the run line
sums them and says whether the model's table keeps them, and the progress table records them.
Every line that did not reach a downstream table is then said where it left.

A file source is observed only by a model that names the column or selects `*`: Spark refuses a
query over json/csv files that reads only the corrupt-record column (`select count(*)`).
"""

from __future__ import annotations

import itertools
import re
from typing import Callable, Collection, Mapping, Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from dbt_spark_streaming.config.sources import UNREADABLE_OBSERVATION_PREFIX
from dbt_spark_streaming.sources.corrupt_lines import names_column

Observe = Callable[[DataFrame, str, bool], DataFrame]


def observing(sql: str, columns: Collection[str], skipped_suffix: str) -> Observe:
    """What each streaming input of a model with `sql` goes through: counted when it has one of
    the corrupt-record `columns`. Views ending in `skipped_suffix` (the readable lines of a
    source whose unreadable ones are quarantined) are not counted twice."""
    numbers = itertools.count()
    wanted = [column.lower() for column in columns]
    reads_all = re.search(r"(^|[\s,.])\*(?!\s*\))", sql) is not None  # `*`, `t.*`; not count(*)

    def observe(frame: DataFrame, name: str, from_files: bool) -> DataFrame:
        column = next((c for c in frame.columns if c.lower() in wanted), None)
        if column is None or name.lower().endswith(skipped_suffix.lower()):
            return frame
        if from_files and not reads_all and not names_column(sql, column):
            return frame
        return frame.observe(
            f"{UNREADABLE_OBSERVATION_PREFIX}{next(numbers)}",
            F.count(F.when(F.col(f"`{column}`").isNotNull(), 1)).alias(column),
        )

    return observe


def said(counts: Mapping[str, int], table_columns: Sequence[str]) -> str:
    """The run line's words for the unreadable lines that entered the model's query: kept when
    its table has the column, else not carried into it (filtered out, or left as nulls)."""
    kept = {column.lower() for column in table_columns}
    parts = []
    for column, rows in counts.items():
        if not rows:
            continue
        lines = f"{rows} unreadable line{'' if rows == 1 else 's'}"
        if column.lower() in kept:
            parts.append(f", {lines} kept ({column} set)")
        else:
            parts.append(f", {lines} in its input ({column} set) not carried into its table")
    return "".join(parts)

