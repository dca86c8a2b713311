"""One writer per table across machines, through the shared metastore's database.

Delta's default log store for S3 is safe only while a single Spark driver commits to a table:
two drivers committing at once can each write the same next version of its log, and one commit
is lost. The run lock (run_lock.py) keeps to one process per lakehouse on one machine; drivers on
several machines (an always-on service, someone's `dbt run`, two CI jobs) share a lakehouse only
through a shared metastore (metastore.py), so that is where they meet: before a process first
writes a table it takes a PostgreSQL advisory lock named after the table, on a connection of its
own that stays open until the process exits. PostgreSQL releases the lock when that connection
closes, so a killed process (SIGKILL, a lost machine once its TCP connection times out) never
leaves a table locked. Another process that would write the table is refused at once, with who
holds it (the `streaming_table_writers` table in the same database, kept for the message).
A table every process appends to (the progress table) is locked for each commit only.

With the embedded Derby metastore only one process on one machine can open the catalog at all,
and the run lock already covers it: nothing to do here.
"""

from __future__ import annotations

import hashlib
import os
import socket
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator, Optional

from dbt_spark_streaming.errors import StreamingError

HOLDERS_TABLE = "streaming_table_writers"
COMMIT_WAIT_SECONDS = 120.0
_CREATE_HOLDERS = (
    f"create table if not exists {HOLDERS_TABLE} ("
    "table_name varchar(512) primary key, holder varchar(1024) not null, since varchar(64) not null)"
)


class TableBusyError(StreamingError, RuntimeError):
    pass


class TableWriters:
    """This process's connection to the shared metastore's database and the tables it holds."""

    def __init__(self, spark: Any, url: str, user: Optional[str] = None, password: Optional[str] = None):
        self._spark = spark
        self._url, self._user, self._password = url, user, password
        self._connection: Any = None
        self._held: set[str] = set()
        self._lock = threading.Lock()

    def claim(self, table: str, model: str) -> None:
        """Hold `table` for this process from now until it exits (a no-op once held); raises
        TableBusyError, naming the holder, while another process holds it."""
        table = table.lower()
        with self._lock:
            if table in self._held:
                return
            connection = self._connect()
            if not _query_bool(connection, f"select pg_try_advisory_lock({lock_key(table)})"):
                raise TableBusyError(_busy_message(model, table, _holder(connection, table)))
            _record_holder(connection, table)
            self._held.add(table)

    @contextmanager
    def committing(self, table: str, wait_seconds: float = COMMIT_WAIT_SECONDS) -> Iterator[None]:
        """Around one commit to a table that several processes append to (the progress table):
        its lock for the commit only, waiting while another process commits to it."""
        table = table.lower()
        if table in self._held:
            yield
            return
        key = lock_key(table)
        deadline = time.monotonic() + wait_seconds
        while True:
            with self._lock:
                if _query_bool(self._connect(), f"select pg_try_advisory_lock({key})"):
                    break
            if time.monotonic() >= deadline:
                with self._lock:
                    holder = _holder(self._connect(), table)
                raise TableBusyError(_busy_message("(progress)", table, holder))
            time.sleep(0.05)
        try:
            yield
        finally:
            with self._lock:
                _query_bool(self._connect(), f"select pg_advisory_unlock({key})")

    def holds(self, table: str) -> bool:
        return table.lower() in self._held

    def close(self) -> None:
        """Release every table (closing the connection releases its advisory locks)."""
        with self._lock:
            connection, self._connection = self._connection, None
            self._held.clear()
        if connection is not None:
            connection.close()

    def _connect(self) -> Any:
        if self._connection is None or self._connection.isClosed():
            jvm = self._spark.sparkContext._jvm
            properties = jvm.java.util.Properties()
            if self._user:
                properties.setProperty("user", self._user)
            if self._password:
                properties.setProperty("password", self._password)
            self._connection = jvm.java.sql.DriverManager.getConnection(self._url, properties)
            self._connection.setAutoCommit(True)
            _execute(self._connection, _CREATE_HOLDERS)
        return self._connection


def lock_key(table: str) -> int:
    """The table's advisory lock: a signed 64-bit number from its name, the same in every process."""
    digest = hashlib.sha256(f"dbt-spark-streaming table {table.lower()}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _this_process() -> str:
    command = " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]])[:300]
    return f"process {os.getpid()} on {socket.gethostname()} (`{command}`)"


def _record_holder(connection: Any, table: str) -> None:
    since = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    statement = connection.prepareStatement(
        f"insert into {HOLDERS_TABLE} (table_name, holder, since) values (?, ?, ?) "
        "on conflict (table_name) do update set holder = excluded.holder, since = excluded.since")
    try:
        statement.setString(1, table)
        statement.setString(2, _this_process())
        statement.setString(3, since)
        statement.executeUpdate()
    finally:
        statement.close()


def _holder(connection: Any, table: str) -> Optional[tuple[str, str]]:
    statement = connection.prepareStatement(f"select holder, since from {HOLDERS_TABLE} where table_name = ?")
    try:
        statement.setString(1, table)
        result = statement.executeQuery()
        return (result.getString(1), result.getString(2)) if result.next() else None
    finally:
        statement.close()


def _busy_message(model: str, table: str, holder: Optional[tuple[str, str]]) -> str:
    who = f"{holder[0]}, since {holder[1]}" if holder else "another process"
    return (
        f"Model {model}: the table {table} is being written by {who}, which shares this "
        "lakehouse's metastore. One process at a time may write a table: two drivers "
        "committing to one Delta table on object storage can lose a commit. Run this once that "
        "process has ended or stopped (a service: `dbt-spark-streaming stop` where it runs), or "
        "leave this model to it (`--exclude`). A process that was killed releases its tables as "
        "soon as the metastore's database sees its connection close."
    )


def _execute(connection: Any, sql: str) -> None:
    statement = connection.createStatement()
    try:
        statement.execute(sql)
    finally:
        statement.close()


def _query_bool(connection: Any, sql: str) -> bool:
    statement = connection.createStatement()
    try:
        result = statement.executeQuery(sql)
        result.next()
        return bool(result.getBoolean(1))
    finally:
        statement.close()
