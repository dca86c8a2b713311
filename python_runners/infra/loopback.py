"""What every test server here shares: loopback ports, a Java to run it, and a child process that
dies with the Python process that started it."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Optional, Sequence


class NoJavaError(RuntimeError):
    pass


def java(server: str) -> str:
    """The `java` of JAVA_HOME, else of PATH, for a test server (named in the error)."""
    java_home = os.environ.get("JAVA_HOME")
    found = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not found or not Path(found).exists():
        raise NoJavaError(
            f"{server} needs Java 17 or newer: no `java` on PATH"
            + (f" nor in JAVA_HOME ({java_home})." if java_home else ".")
        )
    return found


def free_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 now; all held open together, so the OS hands out distinct ones."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def die_with_parent() -> None:
    """In the child before exec: the kernel SIGKILLs the server when the Python process dies.

    Covers what a `stop()` cannot: the test process killed with SIGKILL. (The kernel ties this to
    the thread that started the server, so start it from a thread that lives as long as it.)
    """
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def start_server(command: Sequence[str], log_file: Path, outlive_parent: bool = False) -> subprocess.Popen:
    """The server's process, its output appended to `log_file`. In a session of its own, so a
    Ctrl-C in the terminal reaches the Python process, whose stop then shuts the server down in
    order; killed with the Python process unless `outlive_parent`."""
    with open(log_file, "ab") as log:
        return subprocess.Popen(
            list(command), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=die_with_parent if sys.platform == "linux" and not outlive_parent else None,
        )


def stop_server(process: Optional[subprocess.Popen], timeout: float) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `timeout` seconds."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
