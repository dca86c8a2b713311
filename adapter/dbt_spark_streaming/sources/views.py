"""The temp views models read dbt sources declared with `meta: {stream: {...}}` through.

A model selects from `{{ source('landing', 'recordings') }}`; that resolves to a temp view over
`spark.readStream` (or `spark.read` for models that are not streaming), named when the model
renders (stream_reads.source_view_name) and registered here when the model runs (SourceViews).
Which files a stream has read is recorded in each reading model's checkpoint, so a file is never
ingested twice by it, across restarts. The source's settings are config/sources.py, how it is
read sources/frames.py.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Callable, Mapping

from pyspark.sql import SparkSession

from dbt_spark_streaming.config.stream_reads import source_view_name
from dbt_spark_streaming.lakehouse import Lakehouse
# Imported from here too (a source's settings and reads were in this module).
from dbt_spark_streaming.sources.frames import (  # noqa: F401
    file_source_schema, landing_folder, source_frame,
)
from dbt_spark_streaming.config.sources import (  # noqa: F401
    CORRUPT_RECORD_COLUMN, FILE_FORMATS, StreamSource, StreamSourceConfigError,
)


def register_source_view(
    spark: SparkSession, source: StreamSource, lakehouse: Lakehouse, streaming: bool = True
) -> str:
    """Register the source as a temp view and return the view's name."""
    view_name = source_view_name(source.name, streaming)
    source_frame(spark, source, lakehouse, streaming).createOrReplaceTempView(view_name)
    return view_name


class SourceViews:
    """The source views of one dbt invocation: named while models render, registered as they run.

    `source()` only names the view (`declare`, no Spark), so `dbt compile`, `dbt ls` or
    `dbt docs generate` neither start Spark for it nor list landing folders, infer schemas or
    create folders. A view is registered when SQL that names it is about to run (a streaming
    model's query, or any statement dbt executes), once per invocation and Spark session: the
    adapter (and so this registry) is new for each dbt invocation, so a second `dbt run` in the
    same process registers its views again, with what has landed since. A registration that
    fails (a missing folder) is tried again by the next model that reads the source, so each
    reader fails with the source's message.
    """

    def __init__(self) -> None:
        self._declared: dict[str, tuple[StreamSource, bool]] = {}
        self._registered: dict[str, SparkSession] = {}  # view -> the session it was registered in
        self._pattern: re.Pattern | None = None
        self._lock = threading.Lock()
        self._view_locks: dict[str, threading.Lock] = {}

    def declare(self, source: StreamSource, streaming: bool = True) -> str:
        view = source_view_name(source.name, streaming)
        key = view.lower()  # Spark's view names are case-insensitive, as SQL may write them
        with self._lock:
            if self._declared.get(key) != (source, streaming):
                self._declared[key] = (source, streaming)
                self._registered.pop(key, None)
                self._view_locks.setdefault(key, threading.Lock())
                self._pattern = re.compile(
                    r"(?<![\w$])(" + "|".join(map(re.escape, self._declared)) + r")(?![\w$])",
                    re.IGNORECASE,
                )
        return view

    def declare_from_meta(self, source_name: str, stream_meta: Mapping[str, Any], streaming: bool = True) -> str:
        """`declare` of the source a meta.stream describes (checked: StreamSourceConfigError)."""
        return self.declare(StreamSource.from_meta(source_name, stream_meta), streaming)

    def streaming_sources(self) -> dict[str, StreamSource]:
        """The declared views of streams (lower case) and their sources."""
        with self._lock:
            return {view: source for view, (source, streaming) in self._declared.items() if streaming}

    def corrupt_record_columns(self) -> set[str]:
        """The columns the declared sources keep unreadable lines in, and Spark's default name
        (a table written from such a source carries it under that name)."""
        with self._lock:
            declared = {source.corrupt_record_column for source, _streaming in self._declared.values()}
        return {CORRUPT_RECORD_COLUMN, *(column for column in declared if column)}

    def named_in(self, sql: str) -> list[str]:
        """The declared views that the SQL names, in order of first mention."""
        pattern = self._pattern
        if pattern is None or not sql:
            return []
        return list(dict.fromkeys(match.lower() for match in pattern.findall(sql)))

    def register_named_in(
        self, spark_for: Callable[[], SparkSession], sql: str, lakehouse: Lakehouse | None = None
    ) -> list[str]:
        """Register the declared views the SQL names that this session does not have yet;
        returns the views registered now. Raises StreamSourceConfigError (e.g. a missing folder)."""
        registered = []
        for view in self.named_in(sql):
            with self._view_locks[view]:  # two threads reading one source register it once
                spark = spark_for()
                if self._registered.get(view) is spark:
                    continue
                source, streaming = self._declared[view]
                register_source_view(spark, source, lakehouse or Lakehouse.from_env(), streaming)
                self._registered[view] = spark
                registered.append(view)
        return registered
