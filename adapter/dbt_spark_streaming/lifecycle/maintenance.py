"""A streaming model's table kept small: its small files compacted, the files no version in use
needs deleted, with two guards that Delta's own VACUUM does not have.

- **Compaction** (Delta OPTIMIZE, bin-packing): once the table holds `COMPACT_AT_FILES` live data
  files under `SMALL_FILE_BYTES`, which it rewrites into files of up to 1 GB. One commit that changes no data (`dataChange: false`): streams reading the table skip it.
- **VACUUM** deletes the files removed from the table more than a retention ago. The retention
  is the model's `file_retention` (config/maintenance.py), longer where something still needs
  older files, in whole hours up (Delta's VACUUM rounds its retention to hours):
  - **a rollback**: while the model's last redeploy is inside its `rollback_window`, its table
    is not vacuumed at all, so the version from before the swap can be restored;
  - **a reader not caught up**: every streaming checkpoint of the lakehouse that reads the table
    (a stopped model's too) is found by the table's Delta id in its offsets; the retention
    reaches back to the commit the slowest one has not read yet, so its unread files stay.

Both are one Delta commit or none: a process killed during either leaves files no version
references, which the next VACUUM deletes; no row is lost or repeated.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from delta.tables import DeltaTable
from pyspark.sql import SparkSession

from dbt_spark_streaming.config.maintenance import SMALL_FILE_BYTES, Maintenance
from dbt_spark_streaming.delta import log as delta_log
from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.jvm.checkpoint_log import COMMITS, OFFSETS, entry, last_batch
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.lifecycle import log_history, redeploy, seen_files
from dbt_spark_streaming.lifecycle.upstream import positions_in_offsets

COMPACT_AT_FILES = 50
# A batch writes its files before it commits them: a file can be this much older than its commit.
WRITE_MARGIN_SECONDS = 300.0
_CHECKPOINT_DEPTH = 4  # <root>/<schema>/<model>, and a custom location a level or two deeper


@dataclass(frozen=True)
class Upkeep:
    """What maintaining one model's table needs to know."""

    model: str
    table: str
    location: str
    maintenance: Maintenance
    checkpoint: Optional[str] = None  # its own, beside which a redeploy is recorded
    rollback_seconds: float = 0.0

    @classmethod
    def of(cls, config: Any, table: str, location: str) -> "Upkeep":
        """A model's, from its config (config/model.py)."""
        return cls(config.model, table, location, config.maintenance,
                   config.checkpoint, getattr(config, "rollback_seconds", 0.0))

    @classmethod
    def unowned(cls, table: str, location: str) -> "Upkeep":
        """A table no model owns (the progress table): the default settings, no redeploy."""
        return cls(table, table, location, Maintenance())


@dataclass(frozen=True)
class Reader:
    """A streaming checkpoint's place in one Delta table: the first version it has not read
    (None: it has not finished its first batch, or is still in the snapshot it started from)."""

    checkpoint: str
    version: Optional[int]


@dataclass
class Maintained:
    """What one pass did to one table, for the terminal."""

    model: str
    compacted: Optional[tuple[int, int]] = None  # (files removed, files added)
    vacuumed_hours: Optional[float] = None
    log_files_deleted: int = 0
    files_forgotten: int = 0  # its file sources' entries of files moved away (seen_files.py)
    held: list[str] = field(default_factory=list)  # why VACUUM kept more, or did not run

    def said(self) -> str:
        done = []
        if self.compacted:
            done.append(f"compacted {self.compacted[0]} files into {self.compacted[1]}")
        if self.vacuumed_hours is not None:
            done.append(f"vacuumed files removed more than {_duration(self.vacuumed_hours * 3600)} ago")
        if self.log_files_deleted:
            done.append(f"trimmed {self.log_files_deleted} files of its log's older history")
        if self.files_forgotten:
            done.append(f"forgot {self.files_forgotten} landed files that its sources took and are gone")
        done += self.held
        return f"{self.model}: {'; '.join(done) if done else 'nothing to do'}"


def maintain(spark: SparkSession, upkeep: Upkeep, readers: dict[str, list[Reader]],
             compact_at: int = COMPACT_AT_FILES, vacuum: bool = True) -> Maintained:
    """One pass over the table: its retention properties, compaction if due, its log's history
    trimmed and VACUUM (guarded). `readers`: reader_positions() of the lakehouse."""
    done = Maintained(upkeep.model)
    if not upkeep.maintenance.enabled:
        done.held.append("maintenance is false: left as it is")
        return done
    table = DeltaTable.forPath(spark, upkeep.location)
    snapshot = _snapshot(spark, upkeep)
    changed = _keep_properties(spark, upkeep, snapshot.properties)
    if small_files(spark, upkeep.location) >= compact_at:
        metrics = table.optimize().executeCompaction().collect()[0]["metrics"]
        done.compacted = (int(metrics["numFilesRemoved"]), int(metrics["numFilesAdded"]))
        changed = True
    held = rollback_hold(spark, upkeep)
    if held is not None:
        if vacuum:
            done.held.append(held)
        return done
    if changed:
        snapshot = _snapshot(spark, upkeep)
    done.log_files_deleted = _trim_log(spark, upkeep, snapshot, readers)
    done.files_forgotten = seen_files.trim(upkeep.checkpoint)
    if vacuum:
        seconds, why = reader_need(spark, upkeep, snapshot, readers)
        if seconds is None:
            done.held.append(why)
            return done
        hours = math.ceil(max(upkeep.maintenance.file_retention_seconds, seconds) / 3600)
        table.vacuum(hours)
        done.vacuumed_hours = hours
        if why:
            done.held.append(why)
    return done


def _trim_log(spark: SparkSession, upkeep: Upkeep, table: delta_tables.TableSnapshot,
              readers: dict[str, list[Reader]]) -> int:
    """The log's history older than `log_retention` deleted, back to the slowest reader
    (log_history.py); nothing while a reader is still in the snapshot it started from."""
    positions = [reader.version for reader in readers.get(table.table_id, [])]
    if None in positions:
        return 0
    return log_history.trim(spark, upkeep.location, upkeep.maintenance.log_retention_seconds,
                            min(positions, default=None),
                            lambda version: commit_time(spark, upkeep.location, version))


def small_files(spark: SparkSession, location: str) -> int:
    """The table's live data files smaller than SMALL_FILE_BYTES, from its latest snapshot (after
    a write, the writer's): what compaction would rewrite."""
    snapshot = delta_log.current(spark, delta_log.at_path(spark, location))
    return int(snapshot.allFiles().filter(f"size < {SMALL_FILE_BYTES}").count())


def _keep_properties(spark: SparkSession, upkeep: Upkeep, current: Mapping[str, str]) -> bool:
    """A table created before these settings, or with other values: its retention properties
    set to the model's (one metadata commit, only when they differ; True then)."""
    wanted = upkeep.maintenance.table_properties()
    if all(current.get(key) == value for key, value in wanted.items()):
        return False
    settings = ", ".join(f"'{key}' = '{value}'" for key, value in wanted.items())
    spark.sql(f"alter table delta.`{upkeep.location}` set tblproperties ({settings})")
    return True


def _snapshot(spark: SparkSession, upkeep: Upkeep) -> delta_tables.TableSnapshot:
    """The table's latest version, properties and Delta id, read by its location."""
    return delta_tables.snapshot(spark, upkeep.table, delta_log.at_path(spark, upkeep.location))


def rollback_hold(spark: SparkSession, upkeep: Upkeep, now: Optional[float] = None) -> Optional[str]:
    """Why VACUUM must not run yet for the rollback guard; None when it may."""
    if upkeep.checkpoint is None:
        return None
    state = redeploy.read_state(spark, upkeep.checkpoint)
    if state is None:
        return None
    if state.step != redeploy.DONE:
        return f"not vacuumed: its redeploy {state.id} is {state.step}"
    left = state.swapped_at_ms / 1000 + upkeep.rollback_seconds - (now or time.time())
    if left <= 0:
        return None
    return (f"not vacuumed: a rollback of redeploy {state.id} stays possible for "
            f"{_duration(left)} more (rollback_window), and needs the files of the version before it")


def reader_need(spark: SparkSession, upkeep: Upkeep, table: delta_tables.TableSnapshot,
                readers: dict[str, list[Reader]], now: Optional[float] = None) -> tuple[Optional[float], str]:
    """(seconds VACUUM must keep for the slowest streaming reader of the table, what holds it);
    (None, why) when VACUUM must not run at all. `table`: its latest snapshot."""
    latest = table.version
    need, slowest = 0.0, ""
    for reader in readers.get(table.table_id, []):
        if reader.version is None:
            return None, (f"not vacuumed: the stream of {_name(reader.checkpoint)} has not finished "
                          "its first batch over it, which reads its files as they were")
        if reader.version > latest:
            continue
        committed = commit_time(spark, upkeep.location, reader.version)
        if committed is None:
            return None, (f"not vacuumed: the stream of {_name(reader.checkpoint)} is at version "
                          f"{reader.version}, whose commit is no longer in the log")
        behind = (now or time.time()) - committed + WRITE_MARGIN_SECONDS
        if behind > need:
            need, slowest = behind, reader.checkpoint
    if need <= upkeep.maintenance.file_retention_seconds:
        return need, ""
    return need, (f"kept the files {_name(slowest)} has not read yet (it is {_duration(need)} "
                  "behind)")


def commit_time(spark: SparkSession, location: str, version: int) -> Optional[float]:
    """When a version was committed (its commitInfo's timestamp), in seconds; None if the log
    no longer has it."""
    path = f"{location.rstrip('/')}/_delta_log/{version:020d}.json"
    try:
        text = hadoop_fs.read_text(spark, path)
    except Exception:
        return None
    for line in text.splitlines():
        action = json.loads(line) if line.strip() else {}
        if "commitInfo" in action:
            return int(action["commitInfo"]["timestamp"]) / 1000
    return None


def reader_positions(spark: SparkSession, lakehouse: Optional[Lakehouse] = None) -> dict[str, list[Reader]]:
    """Every streaming checkpoint under the lakehouse's checkpoint root (a redeploy's old and
    new ones too), by the Delta table ids it reads: where each stands."""
    readers: dict[str, list[Reader]] = {}
    for checkpoint in _checkpoints(spark, (lakehouse or Lakehouse.from_env()).checkpoints, _CHECKPOINT_DEPTH):
        for table_id, version in _positions(spark, checkpoint).items():
            readers.setdefault(table_id, []).append(Reader(checkpoint, version))
    return readers


def _checkpoints(spark: SparkSession, folder: str, depth: int) -> list[str]:
    names = hadoop_fs.list_names(spark, folder)
    if OFFSETS in names:
        return [folder]
    if depth == 0:
        return []
    found = []
    for name in names:
        if not name.startswith((".", "_")) and "." not in name:
            found += _checkpoints(spark, f"{folder.rstrip('/')}/{name}", depth - 1)
    return found


def _positions(spark: SparkSession, checkpoint: str) -> dict[str, Optional[int]]:
    """The first unread version of each Delta table the checkpoint reads, after its last
    committed batch; None for a table whose stream has not left its starting snapshot."""
    committed = last_batch(spark, checkpoint, COMMITS)
    planned = last_batch(spark, checkpoint, OFFSETS)
    if planned is None:
        return {}
    if committed is None:  # the first batch is not done: it reads the tables from their start
        return {table_id: None for table_id in
                positions_in_offsets("\n".join(entry(spark, checkpoint, OFFSETS, planned)))}
    positions = positions_in_offsets("\n".join(entry(spark, checkpoint, OFFSETS, committed)))
    return {table_id: None if from_snapshot else version
            for table_id, (version, from_snapshot) in positions.items()}


def _name(checkpoint: str) -> str:
    return "/".join(checkpoint.rstrip("/").split("/")[-2:])


def _duration(seconds: float) -> str:
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:.0f} days"
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.0f} hours"
    if seconds >= 120:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds:.0f} seconds"
