"""While serving, the progress table (progress/table.py) is kept on a thread of its own.

Every `FLUSH_SECONDS` the batches heard since the last flush are appended, and the table is
maintained as a served model's table is, on the same schedule (serve/upkeep.py, an append
counting as a run; lifecycle/maintenance.py does the work): checked for compaction every
`compact_at() // 4` appends, vacuumed every `vacuum_every_seconds()` while it has been written
lately, nothing while nothing is heard. The serving loop never waits on
these commits: on the 60-minute soak an append took 3.5 s on average while the models ran
(docs/BENCHMARKS.md section 7), time in which the loop started no run.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

from pyspark.sql import SparkSession

from dbt_spark_streaming.errors import root_cause
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.lifecycle.maintenance import Upkeep, maintain, reader_positions
from dbt_spark_streaming.progress import table as progress_table
from dbt_spark_streaming.progress.own_time import OwnTime
from dbt_spark_streaming.progress.recorder import ProgressRecorder
from dbt_spark_streaming.serve.upkeep import UpkeepSchedule, compact_at, vacuum_every_seconds

# Each flush is a Delta commit to the progress table, CPU an always-on service's streams share.
FLUSH_SECONDS = 30.0

Log = Callable[[str], None]


class ProgressKeeper:
    """Flushes the recorder to the progress table and maintains that table, on its own thread."""

    def __init__(self, spark: SparkSession, recorder: ProgressRecorder, lakehouse: Lakehouse, log: Log,
                 every_seconds: float = FLUSH_SECONDS):
        self._spark = spark
        self._recorder = recorder
        self._log = log
        self._every = every_seconds
        self._compact_at = compact_at()
        name = progress_table.table_name()
        self._schedule = UpkeepSchedule(Upkeep.unowned(name, progress_table.table_location(lakehouse)),
                                        check_every_runs=max(1, self._compact_at // 4),
                                        vacuum_every=vacuum_every_seconds())
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._keep, name="progress-keeper", daemon=True)
        self.own_time = OwnTime()

    def start(self) -> "ProgressKeeper":
        self._thread.start()
        return self

    def stop(self) -> None:
        """After the flush or maintenance under way; then the last batches heard are appended."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()
        self.flush()

    def flush(self) -> bool:
        """Whether it appended any row."""
        with self.own_time.timed("progress flush"):
            try:
                return bool(self._recorder.flush(self._spark))
            except Exception as error:  # the recorder keeps its rows for the next flush
                self._log(f"Could not append to the progress table: {root_cause(error)}")
                return False

    def _keep(self) -> None:
        while not self._stopping.wait(self._every):
            if self.flush():
                self._schedule.ran()
            if not self._stopping.is_set() and self._schedule.due(time.time()):
                self._maintain(vacuum=self._schedule.started())

    def _maintain(self, vacuum: bool) -> None:
        upkeep = self._schedule.upkeep
        with self.own_time.timed("progress table maintenance"):
            try:
                readers = reader_positions(self._spark)  # the log trim's guard, every pass
                done = maintain(self._spark, upkeep, readers, self._compact_at, vacuum=vacuum)
            except Exception as error:
                self._schedule.failed()
                self._log(f"Could not maintain the progress table {upkeep.table}: {root_cause(error)}")
                return
        if done.compacted:
            self._log(f"Maintained {done.said()}")
