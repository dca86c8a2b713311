"""A command's side of the warm driver: attach to the lakehouse's running JVM, or say why not.

A command attaches when the lakehouse has a live driver whose JVM started with the settings this
command would start its own with (master, lakehouse, jars, metastore, memory: every setting that
cannot change in a running session). A setting that can change per session (most `spark.sql.*`)
is set on the command's own session instead. Otherwise, or when the driver does not answer at
once, the command starts its own JVM as before and says why on one line.

DBT_SPARK_STREAMING_ATTACH=0 turns attaching off.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Optional

from pyspark import SparkContext
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

from dbt_spark_streaming.driver import driver_file
from dbt_spark_streaming.driver.driver_file import DriverRecord

ATTACH_VARIABLE = "DBT_SPARK_STREAMING_ATTACH"
# The first words of the line a command says when it attaches, and when it will not.
ATTACHED_SAID = "Attached to the warm driver"
REFUSED_SAID = "Not using the warm driver"
CONNECT_SECONDS = 1.0
# Making a session and a py4j server takes a tenth of a second; a driver that takes longer than
# this is busy or hung, and a command does not wait on it.
HANDSHAKE_SECONDS = 8.0
# Settings that name this command's own files: they may differ without mattering.
_PER_PROCESS = frozenset({"spark.app.name"})


@dataclass(frozen=True)
class Attached:
    session: SparkSession
    driver: DriverRecord
    seconds: float


class NotAttached(Exception):
    """Why this command starts its own JVM although the lakehouse has a warm driver."""


# The control connection: open while this process lives, so that the driver releases what this
# process held as soon as it exits or is killed.
_control: Optional[socket.socket] = None
_attaching = threading.Lock()


def attach_turned_off(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get(ATTACH_VARIABLE, "1").strip().lower() in ("0", "false", "no", "off", "never")


def try_attach(lakehouse_root: str, conf: Mapping[str, str],
               note: Callable[[str], None]) -> Optional[Attached]:
    """This process's session on the lakehouse's warm driver, or None (no driver, attaching
    turned off, or a reason given to `note`) when the caller is to start its own JVM."""
    if attach_turned_off():
        return None
    record = driver_file.read(lakehouse_root)
    if record is None:
        return None
    started = time.perf_counter()
    try:
        with _attaching:
            session = _attach(record, conf)
    except NotAttached as why:
        note(f"{REFUSED_SAID} (process {record.pid}): {why}; starting a JVM of this command's own.")
        return None
    return Attached(session, record, time.perf_counter() - started)


def fixed_differences(driver_conf: Mapping[str, str], conf: Mapping[str, str]) -> dict[str, tuple]:
    """Each setting whose value differs between the driver's JVM and this command's: key ->
    (driver's, this command's); None where one side does not set it."""
    keys = (set(driver_conf) | set(conf)) - _PER_PROCESS
    return {key: (driver_conf.get(key), conf.get(key)) for key in sorted(keys)
            if driver_conf.get(key) != conf.get(key)}


def _attach(record: DriverRecord, conf: Mapping[str, str]) -> SparkSession:
    global _control
    differences = fixed_differences(record.conf, conf)
    control = _connect(record)
    try:
        reply = _handshake(control, record)
        gateway = _gateway_on(reply["port"], reply["token"])
        try:
            _check_fixed_settings(gateway.entry_point, differences)
        except NotAttached:
            gateway.shutdown()
            raise
        spark = _session_of(gateway)
        for key, (_, own_value) in differences.items():
            spark.conf.set(key, own_value) if own_value is not None else spark.conf.unset(key)
    except BaseException:
        control.close()
        raise
    _control = control
    return spark


def _connect(record: DriverRecord) -> socket.socket:
    try:
        return socket.create_connection(("127.0.0.1", record.port), timeout=CONNECT_SECONDS)
    except OSError as error:
        raise NotAttached(f"it does not answer on 127.0.0.1:{record.port} ({error})") from None


def _handshake(control: socket.socket, record: DriverRecord) -> dict:
    control.settimeout(HANDSHAKE_SECONDS)
    request = {"secret": record.secret, "pid": os.getpid(), "command": _command_line()}
    try:
        control.sendall((json.dumps(request) + "\n").encode("utf-8"))
        line = control.makefile("r", encoding="utf-8").readline()
    except OSError as error:
        raise NotAttached(f"it did not answer within {HANDSHAKE_SECONDS:g} s ({error})") from None
    try:
        reply = json.loads(line)
    except ValueError:
        raise NotAttached("it closed the connection without an answer") from None
    if "error" in reply:
        raise NotAttached(f"it could not make a session ({reply['error']})")
    control.settimeout(None)
    return reply


def _gateway_on(port: int, token: str):
    """pyspark's py4j gateway, on this client's own server in the driver's JVM."""
    saved = {key: os.environ.get(key) for key in ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET")}
    os.environ["PYSPARK_GATEWAY_PORT"] = str(port)
    os.environ["PYSPARK_GATEWAY_SECRET"] = token
    try:
        gateway = launch_gateway()
    finally:  # a later build in this process (the driver gone) starts its own JVM again
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return gateway


def _session_of(gateway) -> SparkSession:
    """pyspark's SparkContext and SparkSession around the session the driver made for us."""
    jvm = gateway.jvm
    jsession = gateway.entry_point
    jsc = jvm.org.apache.spark.api.java.JavaSparkContext.fromSparkContext(jsession.sparkContext())
    session_class = jvm.org.apache.spark.sql.SparkSession
    default_session = session_class.getDefaultSession()
    in_main_thread = threading.current_thread() is threading.main_thread()
    interrupt = signal.getsignal(signal.SIGINT) if in_main_thread else None
    context = SparkContext(gateway=gateway, jsc=jsc)
    if in_main_thread:
        # pyspark's own handler cancels every job of the JVM: the driver's other clients' too.
        signal.signal(signal.SIGINT, interrupt)
    spark = SparkSession(context, jsparkSession=jsession)
    if default_session.isDefined():  # the JVM's default stays the driver's own session
        session_class.setDefaultSession(default_session.get())
    return spark


def _check_fixed_settings(jsession, differences: dict[str, tuple]) -> None:
    conf = jsession.conf()
    fixed = [key for key in differences if not conf.isModifiable(key)]
    if fixed:
        key = fixed[0]
        driver_value, own_value = differences[key]
        more = f" (and {len(fixed) - 1} more)" if len(fixed) > 1 else ""
        raise NotAttached(f"its JVM started with {key}={driver_value!r}, this command's would "
                          f"have {own_value!r}{more}")


def _command_line() -> str:
    return " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]])[:200]
