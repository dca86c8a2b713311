"""A Spark session's SQL settings changed for a while and put back as they were.

A stream takes its session's settings when it starts, so a setting meant for some queries only
(the service's, a MERGE's) is set before they start and put back after: unset again when the
session did not have it, so Spark's default, or the profile's, applies as before.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Mapping, Optional

from pyspark.sql import SparkSession

Settings = Mapping[str, Optional[str]]


def set_settings(spark: SparkSession, settings: Settings) -> dict[str, Optional[str]]:
    """Set (None: unset) each setting on the session; what they were, to set back with this."""
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)
    return before


@contextmanager
def settings_for_now(spark: SparkSession, settings: Settings) -> Iterator[None]:
    """The session with `settings` inside the block, as it was after it."""
    before = set_settings(spark, settings)
    try:
        yield
    finally:
        set_settings(spark, before)
