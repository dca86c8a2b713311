"""A PostgreSQL server on loopback for the shared Hive metastore (the `cluster` target's default).

Started and stopped by `python -m python_runners cluster start|stop` (cluster.py). PostgreSQL comes from Debian's
packages (installed here with apt-get when missing and running as root); its data lives in
`<lakehouse>/metastore-postgres/` (METASTORE_PG_DATA moves it), so deleting the lakehouse resets
the catalog along with the tables. The server listens on 127.0.0.1 only, port METASTORE_PG_PORT
(5433, beside a system PostgreSQL on 5432), and trusts local connections: it is for one machine's
tests and demos. A production metastore is a database your platform runs, named by URL.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Optional, Sequence

from dbt_spark_streaming.lakehouse import Lakehouse

DATABASE = "metastore"
ROLE = "hive"
SERVER_USER = "postgres"  # PostgreSQL refuses to run as root; Debian's package creates this user


class PostgresMetastoreError(RuntimeError):
    pass


def port() -> int:
    return int(os.environ.get("METASTORE_PG_PORT", "5433"))


def data_dir(lakehouse: Optional[Lakehouse] = None) -> Path:
    configured = os.environ.get("METASTORE_PG_DATA")
    if configured:
        return Path(configured).resolve()
    return Path((lakehouse or Lakehouse.from_env()).root) / "metastore-postgres"


def jdbc_url() -> str:
    return f"jdbc:postgresql://127.0.0.1:{port()}/{DATABASE}?user={ROLE}"


def start(lakehouse: Optional[Lakehouse] = None) -> str:
    """Start the server (initialising its data folder and database once); returns the JDBC URL."""
    binaries = installed_binaries()
    data = data_dir(lakehouse)
    if not (data / "PG_VERSION").exists():
        _initialise(binaries, data)
    if not _running(binaries, data):
        _as_server_user([
            str(binaries / "pg_ctl"), "--pgdata", str(data), "--log", str(data / "server.log"),
            "--wait", "--options", f"-p {port()} -c listen_addresses=127.0.0.1 -k {data}",
            "start",
        ], what=f"start PostgreSQL (log: {data / 'server.log'})")
    _create_database(binaries, data)
    return jdbc_url()


def stop(lakehouse: Optional[Lakehouse] = None) -> None:
    if is_running(lakehouse):
        _as_server_user([str(_server_bin_folders()[-1] / "pg_ctl"), "--pgdata", str(data_dir(lakehouse)),
                         "--mode", "fast", "--wait", "stop"], what="stop PostgreSQL")


def is_running(lakehouse: Optional[Lakehouse] = None) -> bool:
    """Whether the server is up; never installs one (that is for `start`)."""
    found, data = _server_bin_folders(), data_dir(lakehouse)
    return bool(found) and (data / "PG_VERSION").exists() and _running(found[-1], data)


def installed_binaries() -> Path:
    """The server's bin folder, installing Debian's `postgresql` package if there is none."""
    found = _server_bin_folders()
    if not found:
        _install_from_debian()
        found = _server_bin_folders()
    if not found:
        raise PostgresMetastoreError(
            "No PostgreSQL server found in /usr/lib/postgresql/*/bin after installing Debian's "
            "`postgresql` package."
        )
    return found[-1]


def _server_bin_folders() -> list[Path]:
    folders = [p.parent for p in Path("/usr/lib/postgresql").glob("*/bin/pg_ctl")]
    return sorted(folders, key=lambda folder: int(folder.parent.name) if folder.parent.name.isdigit() else 0)


def _install_from_debian() -> None:
    if os.geteuid() != 0:
        raise PostgresMetastoreError(
            "The shared metastore needs a PostgreSQL server, and none is installed. Install "
            "Debian's package once (`sudo apt-get install -y postgresql`), or point "
            "LAKEHOUSE_METASTORE_URL at a PostgreSQL database you already have."
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", "postgresql"]
    if subprocess.run(install, env=env, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update"], env=env, check=True, capture_output=True)
        completed = subprocess.run(install, env=env, capture_output=True, text=True)
        if completed.returncode != 0:
            raise PostgresMetastoreError(
                f"`{' '.join(install)}` failed:\n{completed.stderr.strip()[-2000:]}"
            )


def _initialise(binaries: Path, data: Path) -> None:
    data.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(data, user=SERVER_USER, group=SERVER_USER)
        data.chmod(0o700)
        if _as_server_user(["test", "-w", str(data)], check=False).returncode != 0:
            raise PostgresMetastoreError(
                f"PostgreSQL runs as the user {SERVER_USER}, which cannot reach {data}: a folder "
                f"above it is private to root. Set METASTORE_PG_DATA to a folder under one that "
                f"others may enter (mode 755), or make the lakehouse folder's parents so."
            )
    _as_server_user([str(binaries / "initdb"), "--pgdata", str(data), "--username", SERVER_USER,
                     "--auth", "trust", "--encoding", "UTF8", "--no-instructions"],
                    what=f"initialise a PostgreSQL data folder at {data}")


def _running(binaries: Path, data: Path) -> bool:
    status = _as_server_user([str(binaries / "pg_ctl"), "--pgdata", str(data), "status"], check=False)
    return status.returncode == 0


def _create_database(binaries: Path, data: Path) -> None:
    def psql(sql: str) -> str:
        return _as_server_user([
            str(binaries / "psql"), "--host", "127.0.0.1", "--port", str(port()),
            "--username", SERVER_USER, "--dbname", "postgres", "--tuples-only", "--no-align",
            "--command", sql,
        ], what=f"run `{sql}`").stdout.strip()

    if not psql(f"SELECT 1 FROM pg_roles WHERE rolname = '{ROLE}'"):
        psql(f"CREATE ROLE {ROLE} LOGIN")
    if not psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'"):
        psql(f"CREATE DATABASE {DATABASE} OWNER {ROLE}")


def _as_server_user(
    command: Sequence[str], what: str = "", check: bool = True
) -> subprocess.CompletedProcess:
    if os.geteuid() == 0:
        command = ["runuser", "-u", SERVER_USER, "--", *command]
    completed = subprocess.run(command, capture_output=True, text=True, cwd="/")
    if check and completed.returncode != 0:
        raise PostgresMetastoreError(
            f"Could not {what}: `{' '.join(command)}` exited with {completed.returncode}.\n"
            f"{(completed.stderr or completed.stdout).strip()[-2000:]}"
        )
    return completed
