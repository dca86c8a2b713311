"""Credentials and connections: dbt-spark's session method on a Delta-enabled session."""

from __future__ import annotations

import os
import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional, Tuple

from dbt.adapters.contracts.connection import Connection
from dbt.flags import get_flags
from dbt_common.exceptions import DbtRuntimeError
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)

from dbt.adapters.spark_streaming.errors import as_dbt_error
import dbt_spark_streaming as runtime

# progress/table.py's TABLE_VARIABLE, named here too: reading it from there would import Spark
# in commands that run no SQL (parse, ls).
PROGRESS_TABLE_VARIABLE = "STREAM_PROGRESS_TABLE"
# Set before dbt started: the user's choice, kept for every target.
_PROGRESS_TABLE_GIVEN = bool(os.environ.get(PROGRESS_TABLE_VARIABLE))


@dataclass
class SparkStreamingCredentials(SparkCredentials):
    master: str = runtime.DEFAULT_MASTER
    # A shared Hive metastore's JDBC URL (e.g. the `cluster` target's PostgreSQL); none: Derby.
    metastore_url: Optional[str] = None
    # Where tables, checkpoints, the Derby metastore and landing files live; relative to the
    # project's folder. Unset: LAKEHOUSE_DIR, else <project>/.lakehouse.
    lakehouse_dir: Optional[str] = None

    @classmethod
    def __pre_deserialize__(cls, data: Any) -> Any:
        data = super().__pre_deserialize__(data)
        data.setdefault("method", SparkConnectionMethod.SESSION.value)
        data.setdefault("host", "localhost")
        return data

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.method != SparkConnectionMethod.SESSION:
            raise DbtRuntimeError(
                f"The spark_streaming adapter runs streams in-process and only supports "
                f"`method: session` (profile says `method: {self.method}`). Remove `method` "
                f"from the profile or set it to `session`."
            )

    @property
    def type(self) -> str:
        return "spark_streaming"

    def _connection_keys(self) -> tuple[str, ...]:
        return ("master", "schema")

    def connection_info(self, *, with_aliases: bool = False) -> Iterator[Tuple[str, Any]]:
        """The keys above, then where the lakehouse keeps tables, checkpoints and landing files,
        and which metastore (its password hidden): `dbt debug` prints them under Connection."""
        yield from super().connection_info(with_aliases=with_aliases)
        for part, folder in runtime.lakehouse_folders(self.lakehouse_dir, _project_folder()):
            if part != "metastore":
                yield part, folder
            elif self.metastore_url:
                yield part, re.sub(r"(password=)[^&;]*", r"\1***", self.metastore_url, flags=re.I)
            else:
                yield part, f"embedded Derby in {folder}"


# dbt commands that run SQL, and so need the Spark session: it starts while dbt parses.
# `parse`, `ls` and `compile` only render and start none.
_COMMANDS_THAT_RUN_SQL = frozenset({
    "run", "build", "seed", "snapshot", "test", "show", "run-operation", "retry", "clone",
    "generate", "freshness", "debug",
})


def _project_folder() -> Path:
    return Path(getattr(get_flags(), "PROJECT_DIR", None) or os.getcwd())


def use_progress_table_of(credentials: SparkStreamingCredentials) -> None:
    """Each target records its batches in its own schema's _stream_progress (a CI run writes
    nothing into production's), unless STREAM_PROGRESS_TABLE names one."""
    if not _PROGRESS_TABLE_GIVEN:
        os.environ[PROGRESS_TABLE_VARIABLE] = f"{credentials.schema}._stream_progress"


def session_for(credentials: SparkStreamingCredentials):
    return runtime.get_or_create_session(**_session_settings(credentials))


def _session_settings(credentials: SparkStreamingCredentials) -> dict[str, Any]:
    return {
        "master": credentials.master,
        "extra_conf": credentials.server_side_parameters,
        "metastore_url": credentials.metastore_url,
    }


def _command_runs_sql() -> bool:
    return getattr(get_flags(), "WHICH", None) in _COMMANDS_THAT_RUN_SQL


class SparkStreamingConnectionManager(SparkConnectionManager):
    TYPE = "spark_streaming"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        credentials: SparkStreamingCredentials = self.profile.credentials  # type: ignore
        use_progress_table_of(credentials)
        # One per dbt invocation (runtime/run/invocation.py): the profile's lakehouse and target,
        # the source views source() names while rendering, and the run's streaming state.
        self.invocation = runtime.Invocation.begin(
            credentials.lakehouse_dir, _project_folder(), credentials.schema,
            _session_settings(credentials) if _command_runs_sql() else None,
        )

    def register_source_views(self, sql: str) -> list[str]:
        """Register the source views this SQL reads (declared by source(), not registered yet in
        this invocation), just before it runs; a source that cannot be read stops it, saying why."""
        credentials: SparkStreamingCredentials = self.profile.credentials  # type: ignore
        try:
            return self.invocation.source_views.register_named_in(lambda: session_for(credentials), sql)
        except runtime.StreamingError as error:
            raise as_dbt_error(error) from None

    def add_query(self, sql: str, *args: Any, **kwargs: Any) -> Tuple[Connection, Any]:
        # Every statement dbt runs (tables, views, incremental models, tests, `dbt show`, hooks)
        # passes here: a batch read of a meta.stream source finds its view registered.
        self.register_source_views(sql)
        return super().add_query(sql, *args, **kwargs)

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state != "open":
            credentials: SparkStreamingCredentials = connection.credentials  # type: ignore
            try:
                session_for(credentials)
            except runtime.StreamingError as error:
                raise as_dbt_error(error) from None
        return super().open(connection)

    @contextmanager
    def exception_handler(self, sql: str) -> Iterator[None]:
        # dbt-spark re-raises every error as DbtRuntimeError(str(error)). One that already is a
        # DbtRuntimeError says what went wrong (e.g. the run lock's message from open()); wrapped
        # again at each nesting level (statement, macro, ...) it would sit under several
        # "Runtime Error" headings.
        try:
            yield
        except DbtRuntimeError:
            raise
        except Exception as error:
            with super().exception_handler(sql):
                raise error

    def cancel_open(self) -> list[str]:
        """dbt cancels the open connections on Ctrl-C (and --fail-fast): here, streams run on them."""
        if isinstance(sys.exc_info()[1], KeyboardInterrupt):  # called while dbt handles it
            runtime.stop_streams_on_interrupt(self.invocation.run, "Ctrl-C")
        return super().cancel_open()
