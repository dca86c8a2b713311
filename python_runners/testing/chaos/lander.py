"""Keep landing new batches of recordings, status reports and patient changes, on a thread, while the
pipeline is killed and restarted."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable

from python_runners.demo.data import land_batch, land_status_reports
from python_runners.demo.patient_changes import land_patient_changes


class Lander:
    def __init__(
        self, folder: Path, status_folder: Path, changes_folder: Path, every_seconds: float,
        records: int, files: int, after_landing: Callable[[], None] = lambda: None,
    ):
        self.after_landing = after_landing  # e.g. PUT the new files into an object store
        self.folder = folder
        self.status_folder = status_folder
        self.changes_folder = changes_folder
        self.every_seconds = every_seconds
        self.records = records
        self.files = files
        self.batches = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._land, name="lander", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _land(self) -> None:
        while not self._stop.is_set():
            batch = land_batch(self.folder, records=self.records, files=self.files)
            land_status_reports(batch.number, self.status_folder)
            land_patient_changes(batch.number, self.changes_folder)
            self.after_landing()
            self.batches += 1
            self._stop.wait(self.every_seconds)
