"""A real S3 API on loopback, for tests and benchmarks: S3Proxy over a local folder.

    with S3Store(tmp_path / "s3") as store:
        store.create_bucket("lake")
        conf = store.spark_conf()   # S3A pointed at it: endpoint, path-style access, credentials
        lakehouse_dir = "s3a://lake/demo"

It runs the jar in `.jars-s3-store/` (`make setup`) as a process of its own on a free loopback
port, and keeps each bucket as a folder of `workdir/data` (each object a file) with its log in
`workdir/s3proxy.log`. Requests must be signed (AWS signature v2 or v4) with the store's key, as
a real bucket's are. Leaving the block stops it: SIGTERM, then SIGKILL after `stop_timeout`.
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import hmac
import os
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Optional

from python_runners import REPO_ROOT
from python_runners.infra import loopback
from python_runners.infra.maven import copy_maven_dependencies

POM = REPO_ROOT / "jars" / "s3-store" / "pom.xml"
JARS_DIR = Path(os.environ.get("S3_STORE_JARS_DIR", REPO_ROOT / ".jars-s3-store"))
ACCESS_KEY = "lakehouse-test"
SECRET_KEY = "lakehouse-test-secret"
REGION = "us-east-1"
# A small heap and start-up over peak speed: a test store carries little traffic.
JVM_OPTIONS = ("-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")


class S3StoreError(RuntimeError):
    pass


def fetch() -> list[str]:
    copy_maven_dependencies(POM, JARS_DIR)
    return sorted(str(jar) for jar in JARS_DIR.glob("*.jar"))


def server_jar(jars_dir: Path = JARS_DIR) -> Path:
    found = sorted(Path(jars_dir).glob("s3proxy-*.jar"))
    if not found:
        raise S3StoreError(
            f"No S3Proxy jar in {jars_dir}. Fetch it from Maven Central once with `make setup` "
            "(or `python -m python_runners jars --s3-store`)."
        )
    return found[-1]


class S3Store:
    def __init__(self, workdir: str | os.PathLike, start_timeout: float = 60.0,
                 stop_timeout: float = 20.0, port: Optional[int] = None, outlive_parent: bool = False):
        self.workdir = Path(workdir).resolve()
        self.outlive_parent = outlive_parent  # `make s3-store-start`'s: it runs on after the command
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.jar = server_jar()
        self.java = loopback.java("The S3 store (S3Proxy)")
        self.port = port
        self.process: Optional[subprocess.Popen] = None

    @property
    def endpoint(self) -> str:
        if self.port is None:
            raise S3StoreError("The S3 store is not started; use `with S3Store(...)`.")
        return f"http://127.0.0.1:{self.port}"

    @property
    def data_dir(self) -> Path:
        """Where the buckets are: `data_dir / bucket / key` is an object's file."""
        return self.workdir / "data"

    @property
    def log_file(self) -> Path:
        return self.workdir / "s3proxy.log"

    def __enter__(self) -> "S3Store":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def start(self) -> "S3Store":
        """Start the server; after `stop()`, again on the same port with the same objects."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self.port is None:
            self.port = loopback.free_ports(1)[0]
        properties = self.workdir / "s3proxy.properties"
        properties.write_text(self._properties())
        try:
            self.process = loopback.start_server(
                [self.java, *JVM_OPTIONS, "-jar", str(self.jar), "--properties", str(properties)],
                self.log_file, outlive_parent=self.outlive_parent)
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        process, self.process = self.process, None
        loopback.stop_server(process, self.stop_timeout)

    def create_bucket(self, name: str) -> str:
        """A bucket (a folder of the file back end, which S3Proxy lists as one); its s3a:// root."""
        (self.data_dir / name).mkdir(parents=True, exist_ok=True)
        return f"s3a://{name}"

    def backing_path(self, location: str) -> Path:
        """The file (or folder) that holds an s3a:// location in the file back end: how tests
        read tables and checkpoints back without a client of their own. (Objects are written
        through `put`: a file written here has no ETag, which S3A's reader requires.)"""
        if not location.startswith("s3a://"):
            raise S3StoreError(f"{location} is not an s3a:// location.")
        return self.data_dir / location[len("s3a://"):]

    def put(self, location: str, data: bytes) -> None:
        """One object PUT through the S3 API, signed (AWS signature v2) as any client's."""
        if not location.startswith("s3a://"):
            raise S3StoreError(f"{location} is not an s3a:// location.")
        resource = "/" + urllib.parse.quote(location[len("s3a://"):])
        date = email.utils.formatdate(usegmt=True)
        content_type = "application/octet-stream"
        signed = f"PUT\n\n{content_type}\n{date}\n{resource}".encode()
        signature = base64.b64encode(hmac.new(SECRET_KEY.encode(), signed, hashlib.sha1).digest()).decode()
        request = urllib.request.Request(self.endpoint + resource, data=data, method="PUT", headers={
            "Date": date, "Content-Type": content_type, "Authorization": f"AWS {ACCESS_KEY}:{signature}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()

    def upload(self, files: list[str | os.PathLike], folder: str) -> None:
        """Local files PUT whole into the s3a:// folder, each under its own name: how a landing
        arrives from a source system."""
        for file in files:
            self.put(f"{folder.rstrip('/')}/{Path(file).name}", Path(file).read_bytes())

    def spark_conf(self) -> dict[str, str]:
        """S3A's settings for this store: what a profile's server_side_parameters would hold."""
        return {f"spark.hadoop.{key}": value for key, value in self.hadoop_conf().items()}

    def hadoop_conf(self) -> dict[str, str]:
        return {
            "fs.s3a.endpoint": self.endpoint,
            "fs.s3a.endpoint.region": REGION,
            "fs.s3a.path.style.access": "true",
            "fs.s3a.connection.ssl.enabled": "false",
            "fs.s3a.access.key": ACCESS_KEY,
            "fs.s3a.secret.key": SECRET_KEY,
            "fs.s3a.aws.credentials.provider":
                "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        }

    def _properties(self) -> str:
        settings = {
            "s3proxy.endpoint": self.endpoint,
            "s3proxy.authorization": "aws-v2-or-v4",
            "s3proxy.identity": ACCESS_KEY,
            "s3proxy.credential": SECRET_KEY,
            "jclouds.provider": "filesystem",
            "jclouds.filesystem.basedir": str(self.data_dir),
            "jclouds.regions": REGION,
        }
        return "".join(f"{key}={value}\n" for key, value in settings.items())

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while not self._answers():
            if self.process.poll() is not None:
                raise S3StoreError(
                    f"S3Proxy exited with code {self.process.returncode} while starting; its "
                    f"log, {self.log_file}:\n{self._log_tail()}"
                )
            if time.monotonic() > deadline:
                raise S3StoreError(
                    f"S3Proxy did not answer on {self.endpoint} within {self.start_timeout:.0f} s "
                    f"(S3Store(start_timeout=...)); its log, {self.log_file}:\n{self._log_tail()}"
                )
            time.sleep(0.2)

    def _answers(self) -> bool:
        """Any HTTP answer (an unsigned request is refused with 403) means it serves."""
        if not loopback.accepts_connections(self.port):
            return False
        try:
            urllib.request.urlopen(self.endpoint + "/", timeout=2).close()
        except urllib.error.HTTPError:
            return True
        except OSError:
            return False
        return True

    def _log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"


# `python -m python_runners s3-store start|stop` (make s3-store-start, s3-store-stop): a store
# that runs on after the command, its folder under the lakehouse and its port S3_STORE_PORT.
DEFAULT_PORT = 9090
PID_FILE = "s3proxy.pid"


def store_dir(lakehouse_root: str) -> Path:
    return Path(lakehouse_root) / "s3-store"


def start_detached(workdir: Path, port: int) -> S3Store:
    if _running_pid(workdir) is not None:
        raise S3StoreError(f"An S3 store already runs from {workdir} (pid {_running_pid(workdir)}).")
    store = S3Store(workdir, port=port, outlive_parent=True).start()
    (workdir / PID_FILE).write_text(str(store.process.pid))
    return store


def stop_detached(workdir: Path, timeout: float = 20.0) -> bool:
    """Stop the store started from `workdir`; False if none ran."""
    import signal

    pid = _running_pid(workdir)
    (workdir / PID_FILE).unlink(missing_ok=True)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
    return True


def _running_pid(workdir: Path) -> Optional[int]:
    try:
        pid = int((workdir / PID_FILE).read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if _alive(pid) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a child of ours that exited is a zombie until reaped: not alive
        finished, _ = os.waitpid(pid, os.WNOHANG)
        return finished == 0
    except ChildProcessError:
        return True
