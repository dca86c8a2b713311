"""Where a chaos run's or a benchmark's lakehouse lives: local disk (the default), or an S3 API on
loopback (`--store s3`: `make chaos STORE=s3`, bench/object_store).

On the store, the pipeline's processes reach the lakehouse as `s3a://<bucket>/lake` through the
profile's `s3` target, while this machine's files (run lock, Derby, logs) stay in the local
folder. The caller's own bookkeeping (files landed, the Delta logs and checkpoints it reads to
tell where a kill fell or when a row reached gold, the landed files an audit counts) goes through
the store's back-end folder, where each object is a file (`view`); landed files are written
locally and PUT (`landing`, `upload_landed`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from python_runners.infra.s3_store import ACCESS_KEY, REGION, SECRET_KEY, S3Store

BUCKET = "lakehouse"
KINDS = ("local", "s3")


class LakehouseStore:
    def __init__(self, kind: str, root: Path):
        self.kind = kind
        self.store: Optional[S3Store] = None
        self._uploaded: dict[str, set[str]] = {}
        if kind == "s3":
            # Started here, it ends with this process (the kernel kills it if this one dies).
            self.store = S3Store(root / "s3-store").start()
            self.bucket = self.store.create_bucket(BUCKET)

    def stop(self) -> None:
        if self.store is not None:
            self.store.stop()

    def env(self) -> dict[str, str]:
        """What the pipeline's processes (and an audit's session) need on top of the lakehouse."""
        if self.store is None:
            return {}
        return {"LAKEHOUSE_DIR": f"{self.bucket}/lake",
                "LAKEHOUSE_LOCAL_DIR": str(Path(self.store.workdir).parent),
                "DBT_TARGET": "s3", "S3_ENDPOINT": self.store.endpoint, "AWS_REGION": REGION,
                "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}

    def spark_conf(self) -> dict[str, str]:
        return self.store.spark_conf() if self.store is not None else {}

    def landing(self, location: str) -> Path:
        """Where the lander writes a landing folder's files: the folder itself on local disk;
        for the store, a local copy whose new files `upload_landed` then PUTs (a file written
        into the store's back end has no ETag, which S3A's reader requires)."""
        if self.store is None:
            return Path(location)
        return Path(self.store.workdir).parent / "landed" / location[len("s3a://"):]

    def upload_landed(self, locations: list[str]) -> None:
        """PUT the files landed since the last call into the store, each folder's in name order."""
        if self.store is None:
            return
        for location in locations:
            local = self.landing(location)
            new = [file for file in sorted(local.iterdir()) if not file.name.startswith(".")
                   and file.name not in self._uploaded.setdefault(location, set())] if local.is_dir() else []
            self.store.upload(new, location)
            self._uploaded[location].update(file.name for file in new)

    def make_folder(self, location: str) -> None:
        """An empty folder a stream may read before anything lands in it."""
        if self.store is None:
            Path(location).mkdir(parents=True, exist_ok=True)
        else:
            self.store.put(location.rstrip("/") + "/", b"")

    def view(self, location: str) -> Path:
        """A lakehouse location as a local path this process can read and write."""
        return self.store.backing_path(location) if self.store is not None else Path(location)

    def said(self) -> str:
        return f" (S3Proxy at {self.store.endpoint})" if self.store is not None else ""
