"""The warm driver's file, `<lakehouse>/driver/driver.json`: where a command finds the driver.

It holds the control port (loopback only), the secret a client must send, the host process's id
and the settings the driver's JVM started with. Only its owner may read it (mode 0600, written
whole: a reader never sees half a file). A file whose process is gone is stale: ignored, and
removed by whoever finds it so.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from dbt_spark_streaming.lakehouse import on_local_disk

FOLDER = "driver"
FILE = "driver.json"


@dataclass(frozen=True)
class DriverRecord:
    pid: int
    port: int
    secret: str
    lakehouse: str
    # The settings its JVM started with (session.session_conf): a command attaches only when its
    # own would be the same for every setting that cannot change per session.
    conf: dict = field(default_factory=dict)
    started_at: str = ""
    # "service" (the always-on service) or "driver" (`driver start`)
    kind: str = "driver"
    idle_minutes: Optional[float] = None


def local(lakehouse_root: str) -> bool:
    """A warm driver keeps its file on local disk only (the lakehouse's folder of this
    machine's files, never on object storage, where anyone with the bucket could read the secret)."""
    return on_local_disk(lakehouse_root)


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def driver_path(lakehouse_root: str) -> Path:
    return Path(lakehouse_root) / FOLDER / FILE


def write(record: DriverRecord) -> Path:
    path = driver_path(record.lakehouse)
    path.parent.mkdir(parents=True, exist_ok=True)
    hidden = path.with_name(f".{FILE}.{os.getpid()}")
    descriptor = os.open(hidden, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(asdict(record), handle)
    os.replace(hidden, path)
    return path


def read(lakehouse_root: str) -> Optional[DriverRecord]:
    """The driver's record, or None when there is no file, it cannot be read, or its process is
    gone (the file is then removed)."""
    if not local(lakehouse_root):
        return None
    path = driver_path(lakehouse_root)
    try:
        record = DriverRecord(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None
    if not process_alive(record.pid):
        remove(lakehouse_root, record.pid)
        return None
    return record


def remove(lakehouse_root: str, pid: int) -> None:
    """Remove the file if it is still that process's (a new driver may have written its own)."""
    path = driver_path(lakehouse_root)
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == pid:
            path.unlink()
    except (OSError, ValueError):
        pass


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True
