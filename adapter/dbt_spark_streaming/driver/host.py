"""The warm driver's side: lets dbt commands attach to this process's running JVM.

A command connects to the control port (127.0.0.1, found in the driver's file) and sends the
secret. It gets a Spark session of its own (`newSession()`: its own temp views and SQL settings,
the metastore and cached tables shared) and a py4j server of its own in the JVM, on a new port
with a new token: the JVM's calls back into Python (a `foreachBatch` function, a listener) then
reach the process that defined them, however many clients and served queries run at once.

The command keeps its control connection open while it runs. When it closes, by exit or by a
kill, its queries are stopped (the next run resumes from their checkpoints), its listeners removed
and its py4j server shut down, which lets the JVM collect what it held.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Optional

from dbt_spark_streaming.driver import driver_file
from dbt_spark_streaming.driver.driver_file import DriverRecord

LOOPBACK = "127.0.0.1"
HANDSHAKE_SECONDS = 10.0


@dataclass
class Client:
    pid: int
    command: str
    session: Any  # the client's JVM SparkSession
    server: Any  # its py4j ClientServer in the JVM
    number: int = 0  # the driver's count of attachments when it attached
    since: float = field(default_factory=time.time)
    released: bool = False


class DriverHost:
    """Serves attachments to `spark`'s JVM until stop(). `kind`: "service" or "driver"."""

    def __init__(self, spark: Any, lakehouse_root: str, conf: dict, kind: str,
                 idle_minutes: Optional[float] = None, log: Callable[[str], None] = lambda _: None):
        self.spark = spark
        self.lakehouse_root = lakehouse_root
        self.conf = conf
        self.kind = kind
        self.idle_minutes = idle_minutes
        self.log = log
        self.secret = driver_file.new_secret()
        self.clients: dict[int, Client] = {}
        self.attachments = 0
        self.idle_since = time.monotonic()
        self._lock = threading.Lock()
        self._listener: Optional[socket.socket] = None
        self._stopped = threading.Event()

    def start(self) -> DriverRecord:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind((LOOPBACK, 0))
        listener.listen(16)
        self._listener = listener
        record = DriverRecord(
            pid=os.getpid(), port=listener.getsockname()[1], secret=self.secret,
            lakehouse=self.lakehouse_root, conf=dict(self.conf), kind=self.kind,
            started_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            idle_minutes=self.idle_minutes,
        )
        driver_file.write(record)
        threading.Thread(target=self._accept, name="warm-driver-accept", daemon=True).start()
        return record

    def stop(self) -> None:
        self._stopped.set()
        driver_file.remove(self.lakehouse_root, os.getpid())
        if self._listener is not None:
            self._listener.close()
        with self._lock:
            clients = list(self.clients.values())
        for client in clients:
            self._release(client)

    def idle_seconds(self) -> float:
        """How long no command has been attached (0 while one is)."""
        with self._lock:
            return 0.0 if self.clients else time.monotonic() - self.idle_since

    def status(self) -> dict:
        with self._lock:
            clients = [{"pid": c.pid, "command": c.command, "since": c.since} for c in self.clients.values()]
        return {"clients": clients, "attachments": self.attachments,
                "idle_seconds": round(self.idle_seconds(), 1)}

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                connection, _ = self._listener.accept()  # type: ignore[union-attr]
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), name="warm-driver-client",
                             daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(HANDSHAKE_SECONDS)
            try:
                request = json.loads(connection.makefile("r", encoding="utf-8").readline() or "{}")
            except (OSError, ValueError):
                return
            if request.get("secret") != self.secret:
                return  # not told why: whoever does not have the file has no business here
            if request.get("ask") == "status":
                _send(connection, self.status())
                return
            try:
                client, reply = self._attach(int(request.get("pid", 0)), str(request.get("command", "")))
            except Exception as error:  # noqa: BLE001 - the command says why it starts its own JVM
                _send(connection, {"error": f"{type(error).__name__}: {error}"})
                return
            _send(connection, reply)
            connection.settimeout(None)
            try:
                while connection.recv(4096):  # open until the command exits or is killed
                    pass
            except OSError:
                pass
            finally:
                self._release(client)

    def _attach(self, pid: int, command: str) -> tuple[Client, dict]:
        jvm = self.spark._jvm
        session = self.spark._jsparkSession.newSession()
        token = driver_file.new_secret()
        server = (jvm.py4j.ClientServer.ClientServerBuilder(session)
                  .javaPort(0)
                  .javaAddress(jvm.java.net.InetAddress.getLoopbackAddress())
                  .pythonAddress(jvm.java.net.InetAddress.getLoopbackAddress())
                  .authToken(token)
                  .build())
        with self._lock:
            self.attachments += 1
            client = Client(pid, command, session, server, self.attachments)
            self.clients[client.number] = client
        self.log(f"warm driver: process {pid} attached (`{command}`)")
        return client, {"port": server.getJavaServer().getListeningPort(), "token": token}

    def _release(self, client: Client) -> None:
        """Stop what the client left running, then forget it (its queries first: `clients`
        empty means everything of theirs is released)."""
        with self._lock:
            if client.released:
                return
            client.released = True
        try:
            streams = client.session.streams()
            for query in streams.active():
                query.stop()
            for listener in streams.listListeners():
                streams.removeListener(listener)
        except Exception as error:  # noqa: BLE001 - the JVM may be going down
            self.log(f"warm driver: cleaning up after process {client.pid}: {error}")
        finally:
            client.server.shutdown()
            session_class = self.spark._jvm.org.apache.spark.sql.SparkSession
            default = session_class.getDefaultSession()
            if default.isDefined() and default.get().equals(client.session):
                session_class.setDefaultSession(self.spark._jsparkSession)
            with self._lock:
                self.clients.pop(client.number, None)
                if not self.clients:
                    self.idle_since = time.monotonic()
        self.log(f"warm driver: process {client.pid} detached")


def _send(connection: socket.socket, message: dict) -> None:
    connection.sendall((json.dumps(message) + "\n").encode("utf-8"))


def host_if_none(spark: Any, lakehouse_root: str, conf: dict, kind: str,
                 log: Callable[[str], None]) -> Optional[DriverHost]:
    """A host for this process's JVM, unless it runs on another's (`conf` empty: it attached),
    the lakehouse is not local, or it has a live driver already."""
    if not conf or not driver_file.local(lakehouse_root) or driver_file.read(lakehouse_root) is not None:
        return None
    host = DriverHost(spark, lakehouse_root, conf, kind, log=log)
    host.start()
    return host
