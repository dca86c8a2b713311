"""One run at a time per lakehouse.

Two processes on one lakehouse would fight over its Derby metastore and could start the same
stream twice. The first process to build a Spark session (embedded Derby) or to start a
streaming write (a shared metastore, which other processes may still query) takes an exclusive
lock on `<lakehouse>/run.lock` and keeps it until it exits. The lock is an OS file lock, so a process that
is killed (even with SIGKILL) releases it; the file's content, who held it last, is only for
the message.

Commands attached to a warm driver (driver/) run in the JVM of a process that holds this lock:
among them and that process, each model has a lock of its own (`<lakehouse>/model_locks/`), which
an attached command takes before it writes the model and keeps until it exits, and which the
service takes for each run of a model it serves.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import socket
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator, Optional
from dbt_spark_streaming.errors import StreamingError

LOCK_FILE = "run.lock"


class LakehouseBusyError(StreamingError, RuntimeError):
    pass


_held: Optional[IO[str]] = None
# dbt's worker threads (`--threads N`) claim the lakehouse for their first models at the same
# moment: without this, the second flock on a new handle would find the lock taken by its own process.
_taking = threading.Lock()


def acquire(lakehouse_root: str) -> Optional[dict]:
    """Take the lakehouse's lock for this process; returns the previous holder's record, if any.

    Raises LakehouseBusyError, naming the holder, while another live process holds it.
    """
    with _taking:
        return _acquire(lakehouse_root)


def _acquire(lakehouse_root: str) -> Optional[dict]:
    global _held
    if _held is not None or "://" in lakehouse_root:
        return None
    path = Path(lakehouse_root) / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _read(handle)
        handle.close()
        raise LakehouseBusyError(_busy_message(path, holder)) from None
    previous = _read(handle)
    handle.seek(0)
    handle.truncate()
    json.dump(_this_process(), handle)
    handle.flush()
    _held = handle
    atexit.register(release)
    return previous or None


def release() -> None:
    global _held
    if _held is not None:
        _held.seek(0)
        _held.truncate()
        fcntl.flock(_held, fcntl.LOCK_UN)
        _held.close()
        _held = None


def _this_process() -> dict:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": " ".join(Path(sys.argv[0]).name.split() + sys.argv[1:])[:200],
    }


def _read(handle: IO[str]) -> dict:
    handle.seek(0)
    try:
        return json.loads(handle.read() or "{}")
    except json.JSONDecodeError:
        return {}


def _busy_message(path: Path, holder: dict) -> str:
    who = (
        f"process {holder.get('pid')} on {holder.get('host')} (`{holder.get('command')}`, "
        f"started {holder.get('started')})"
        if holder else "another process"
    )
    return (
        f"The lakehouse {path.parent} is in use by {who}. Only one run at a time may use a "
        f"lakehouse: wait for that run to finish, or stop it (Ctrl-C, or `kill {holder.get('pid', '<pid>')}`). "
        f"The lock is released when its process exits, even if it is killed, so a lock left by "
        f"a dead process never blocks a run; {path} only records who held it last."
    )


MODEL_LOCKS = "model_locks"
MODEL_WAIT_SECONDS = 120.0
_models_held: dict[str, IO[str]] = {}


def model_lock_path(lakehouse_root: str, model: str) -> Path:
    return Path(lakehouse_root) / MODEL_LOCKS / f"{model}.lock"


@contextmanager
def model_claim(lakehouse_root: str, model: str) -> Iterator[bool]:
    """While the block runs, the model's lock if it is free (True) or held by this process
    already; False while another process holds it."""
    with _taking:
        held = model in _models_held
        handle = None if held else _try_model(lakehouse_root, model)
    if not held and handle is None:
        yield False
        return
    try:
        yield True
    finally:
        if handle is not None:
            _release_model(handle)


def _try_model(lakehouse_root: str, model: str) -> Optional[IO[str]]:
    path = model_lock_path(lakehouse_root, model)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    handle.seek(0)
    handle.truncate()
    json.dump(_this_process(), handle)
    handle.flush()
    return handle


def _release_model(handle: IO[str]) -> None:
    handle.seek(0)
    handle.truncate()
    fcntl.flock(handle, fcntl.LOCK_UN)
    handle.close()


def hold_model(lakehouse_root: str, model: str, note=lambda _: None,
               wait_seconds: float = MODEL_WAIT_SECONDS) -> None:
    """Take the model's lock for the rest of this process (a no-op once held), waiting while
    another process's run writes it; raises LakehouseBusyError, naming the holder, after
    `wait_seconds`."""
    deadline = time.monotonic() + wait_seconds
    said = False
    while True:
        with _taking:  # not while waiting: dbt's other threads claim other models meanwhile
            if model in _models_held:
                return
            handle = _try_model(lakehouse_root, model)
            if handle is not None:
                _models_held[model] = handle
                return
        holder = holder_of_model(lakehouse_root, model)
        if time.monotonic() >= deadline:
            raise LakehouseBusyError(
                f"{holder_said(holder)} has been writing it for more than {wait_seconds:g} s; run it "
                "again once that run ends, or stop it.")
        if not said:
            note(f"waiting for {holder_said(holder)}, which is writing it")
            said = True
        time.sleep(0.2)


def holder_of_model(lakehouse_root: str, model: str) -> dict:
    try:
        return json.loads(model_lock_path(lakehouse_root, model).read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}


def holder_said(holder: dict) -> str:
    if not holder:
        return "another process"
    return f"process {holder.get('pid')} (`{holder.get('command')}`)"
