"""One dbt invocation's streaming state, begun with dbt's connection manager, before any model:
the lakehouse and target its files are under, the meta.stream source views source() names while
models render, and the run (live display, progress listener, summaries, served queries, an
earlier invocation's Ctrl-C over), so that none of it is whoever comes first."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional

from dbt_spark_streaming import lakehouse, session
from dbt_spark_streaming.run.streaming_run import StreamingRun
from dbt_spark_streaming.sources.views import SourceViews


@dataclass
class Invocation:
    source_views: SourceViews
    run: StreamingRun

    @classmethod
    def begin(
        cls, lakehouse_dir: Optional[str], project_folder: Path, target_schema: str,
        session_settings: Optional[Mapping[str, Any]] = None,
    ) -> "Invocation":
        """`session_settings`: a command that runs SQL starts its Spark session now, on a thread
        of its own, while dbt parses the project; `dbt parse`, `ls` and `compile` start none."""
        lakehouse.use_root(lakehouse_dir, project_folder)
        lakehouse.use_target(target_schema)
        invocation = cls(SourceViews(), StreamingRun.start())
        if session_settings is not None:
            session.start_in_background(**session_settings, then=_load_model_runtime)
        return invocation

    def end(self) -> None:
        """dbt's end of the command, after its on-run-end hooks: a project without the hook
        serve_streaming_queries() still gets the run's summary and its batches in the progress
        table (after the hook there is nothing left to do), and is told how to serve its
        processing-time queries. Starts no session."""
        spark = session.active_session()
        if spark is not None:
            from dbt_spark_streaming.run import serving  # with pyspark: not for commands without Spark

            self.run.finish(spark)
            serving.say_unserved(spark, self.run)


def _load_model_runtime() -> None:
    """Import what a streaming model's run uses (a fifth of a second), while the session's
    thread would only wait for dbt's first query to start the metastore client."""
    from dbt_spark_streaming.run import model_run  # noqa: F401
    from dbt_spark_streaming.writes import model_query  # noqa: F401
