"""Where the embedded lakehouse keeps its files.

Everything lives under one folder (`.lakehouse/` in the dbt project's folder by default: the
adapter sets LAKEHOUSE_DIR from the profile's `lakehouse_dir` or the project's folder before the
first session), so that deleting it resets the pipeline. Each part can be moved on its own with an environment variable, which is
also how a cluster target points them at shared storage.

A lakehouse on remote storage (`s3a://bucket/lakehouse`) keeps this machine's own files apart,
in a local folder (`local`): the run lock, the warm driver's and the service's records, Spark's
log, and the embedded Derby metastore, which only opens local files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, MutableMapping, Optional

DEFAULT_FOLDER = ".lakehouse"  # under the current folder when nothing says otherwise

ROOT_VARIABLE = "LAKEHOUSE_DIR"
PART_VARIABLES = {
    "warehouse": "LAKEHOUSE_WAREHOUSE_DIR",
    "metastore": "LAKEHOUSE_METASTORE_DIR",
    "checkpoints": "LAKEHOUSE_CHECKPOINT_DIR",
    "landing": "LAKEHOUSE_LANDING_DIR",
}
# This machine's own files when the root is remote (a local root holds them itself).
LOCAL_VARIABLE = "LAKEHOUSE_LOCAL_DIR"
# The dbt target (its schema) the files under the checkpoint root are written for: set by the
# adapter from the profile, so that dev, CI and production keep their own.
TARGET_VARIABLE = "LAKEHOUSE_TARGET"
SOURCE_SCHEMAS = "_source_schemas"


@dataclass(frozen=True)
class Lakehouse:
    root: str
    warehouse: str
    metastore: str
    checkpoints: str
    landing: str
    target: str = ""
    local: str = ""  # this machine's own files: the root itself, unless the root is remote

    def __post_init__(self) -> None:
        if not self.local:
            object.__setattr__(self, "local", self.root)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> "Lakehouse":
        root = _absolute(environ.get(ROOT_VARIABLE) or DEFAULT_FOLDER)
        local = root if on_local_disk(root) else _absolute(environ.get(LOCAL_VARIABLE) or DEFAULT_FOLDER)
        parts = {
            part: _absolute(environ.get(variable) or f"{local if part == 'metastore' else root}/{part}")
            for part, variable in PART_VARIABLES.items()
        }
        return cls(root=root, **parts, target=environ.get(TARGET_VARIABLE, ""), local=local)

    def locations(self) -> tuple[str, ...]:
        return (self.root, self.warehouse, self.checkpoints, self.landing)

    @property
    def remote(self) -> bool:
        """The lakehouse's root is on remote storage (an object store, HDFS), not this machine's disk."""
        return not on_local_disk(self.root)

    def landing_path(self, path: str) -> str:
        """A source path as written in YAML: absolute paths and URIs as they are, others under landing."""
        return _resolve_under(self.landing, path)

    def checkpoint_path(self, path: str) -> str:
        """A checkpoint location as configured: absolute paths and URIs as they are, others under the root."""
        return _resolve_under(self.checkpoints, path)

    def source_schemas(self, source: str) -> str:
        """Where a file source's inferred schema versions and last check are kept: the target's
        own (a check run by dev moves nothing of production's); without a target, shared."""
        return f"{self.checkpoints}/{SOURCE_SCHEMAS}/{f'{self.target}/' if self.target else ''}{source}"

    def shared_source_schemas(self, source: str) -> str:
        """Where every target kept them before each had its own."""
        return f"{self.checkpoints}/{SOURCE_SCHEMAS}/{source}"


def use_target(schema: str, environ: MutableMapping[str, str] = os.environ) -> None:
    """The dbt target (its schema) this process writes files under the checkpoint root for."""
    environ[TARGET_VARIABLE] = schema


def use_root(folder: Optional[str], project: Path, environ: MutableMapping[str, str] = os.environ) -> None:
    """LAKEHOUSE_DIR for this process and the ones it starts, as a dbt profile says it: `folder`
    (its lakehouse_dir; a URI, or a path relative to the project's folder); none given, what
    LAKEHOUSE_DIR already says, else DEFAULT_FOLDER in the project's folder."""
    if folder:
        environ[ROOT_VARIABLE] = _absolute(_resolve_under(str(project), os.path.expanduser(folder)))
    elif not environ.get(ROOT_VARIABLE):
        environ[ROOT_VARIABLE] = _absolute(str(project / DEFAULT_FOLDER))
    if not on_local_disk(environ[ROOT_VARIABLE]) and not environ.get(LOCAL_VARIABLE):
        environ[LOCAL_VARIABLE] = _absolute(str(project / DEFAULT_FOLDER))


def folders_of(folder: Optional[str], project: Path, environ: Mapping[str, str] = os.environ) -> list[tuple[str, str]]:
    """Where a profile's lakehouse keeps each part, as `use_root` would set it (the environment
    is left as it is): what `dbt debug` shows."""
    resolved = dict(environ)
    use_root(folder, project, resolved)
    lakehouse = Lakehouse.from_env(resolved)
    return [("lakehouse", lakehouse.root), ("warehouse", lakehouse.warehouse),
            ("checkpoints", lakehouse.checkpoints), ("landing", lakehouse.landing),
            ("metastore", lakehouse.metastore),
            *([("this machine's files", lakehouse.local)] if lakehouse.remote else [])]


def on_local_disk(location: str) -> bool:
    """A plain path or a file: URI, not HDFS or object storage."""
    return "://" not in location or location.startswith("file:")


def _is_uri(path: str) -> bool:
    return "://" in path or path.startswith("file:")


def _absolute(path: str) -> str:
    return path if _is_uri(path) else str(Path(path).expanduser().resolve())


def _resolve_under(base: str, path: str) -> str:
    if _is_uri(path) or Path(path).is_absolute():
        return path
    return f"{base.rstrip('/')}/{path}"
