"""A model's table maintenance settings, read and checked once: `maintenance`, `file_retention`,
`log_retention` (lifecycle/maintenance.py does the work).

- `file_retention`: how long a file the table no longer uses (compacted away, rewritten by a
  complete-mode batch or a MERGE) stays on disk for readers of older versions, and how long Delta
  remembers its removal in each checkpoint of the log (`delta.deletedFileRetentionDuration`).
  VACUUM keeps longer what a rollback or a stream not yet caught up still needs.
- `log_retention`: how far back the table's history reaches (time travel, DESCRIBE HISTORY):
  maintenance deletes older log files (lifecycle/log_history.py), keeping longer what a rollback
  or a stream not yet caught up still needs. On local and HDFS storage Delta lists the whole log
  at every snapshot update, so a long history slows every commit of a busy table. Delta's own
  clean-up (`delta.logRetentionDuration`), which has neither guard, keeps the longer of it and
  `rollback_window`.

Both go on the table as Delta properties; writing those properties by hand in `tblproperties`
would go around the checks, so that is refused with the setting to use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from dbt_spark_streaming.config.intervals import EXAMPLES, parse_duration_seconds
from dbt_spark_streaming.errors import ConfigError

SETTINGS = ("maintenance", "file_retention", "log_retention")
# A complete-mode gold table rewrites its files at every batch: each rewrite's files are
# remembered for this long in every checkpoint of its log (about 4 files a batch on the
# three-hop soak, a batch every few seconds; docs/BENCHMARKS.md, the soak).
DEFAULT_FILE_RETENTION = "15 minutes"
DEFAULT_ROLLBACK_WINDOW = "7 days"
# Every start of a stream reading a busy table, and every commit to it, lists its whole log on
# local and HDFS storage: the soak's busy tables commit about 40 times a minute, two log files a
# commit, so ten minutes of history was about 800 files and the first ten minutes of serving
# slower than the rest only because the log was still filling (docs/BENCHMARKS.md section 7).
DEFAULT_LOG_RETENTION = "2 minutes"
# A file at least this big is left as it is by compaction (the session's
# spark.databricks.delta.optimize.minFileSize): else each compaction of a table that keeps growing
# rewrites its one big file with the new small ones, and its cost grows with the table.
SMALL_FILE_BYTES = 16 * 1024 * 1024
FILE_RETENTION_PROPERTY = "delta.deletedFileRetentionDuration"
LOG_RETENTION_PROPERTY = "delta.logRetentionDuration"
_SET_BY = {FILE_RETENTION_PROPERTY: "file_retention", LOG_RETENTION_PROPERTY: "log_retention"}


class MaintenanceConfigError(ConfigError):
    pass


@dataclass(frozen=True)
class Maintenance:
    enabled: bool = True
    file_retention: str = DEFAULT_FILE_RETENTION
    log_retention: str = DEFAULT_LOG_RETENTION
    rollback_window: str = DEFAULT_ROLLBACK_WINDOW

    @property
    def file_retention_seconds(self) -> float:
        return parse_duration_seconds(self.file_retention) or 0.0

    @property
    def log_retention_seconds(self) -> float:
        return parse_duration_seconds(self.log_retention) or 0.0

    def table_properties(self) -> dict[str, str]:
        backstop = max(self.log_retention, self.rollback_window, key=lambda d: parse_duration_seconds(d) or 0.0)
        return {FILE_RETENTION_PROPERTY: f"interval {self.file_retention}",
                LOG_RETENTION_PROPERTY: f"interval {backstop}"}

    @classmethod
    def from_config(cls, model: str, config: Mapping[str, Any]) -> "Maintenance":
        enabled = config.get("maintenance", True)
        if not isinstance(enabled, bool):
            raise MaintenanceConfigError(
                f"Model {model}: maintenance {enabled!r} is not true or false. true (the default): "
                "the service and `dbt-spark-streaming maintain` compact its small files and VACUUM "
                "what it no longer uses; false: neither touches its table.")
        tblproperties = config.get("tblproperties") or {}
        for key, setting in _SET_BY.items():
            if key in tblproperties:
                value = str(tblproperties[key]).replace("interval ", "")
                raise MaintenanceConfigError(
                    f"Model {model}: tblproperties sets {key}; set {setting}={value!r} instead, "
                    "which VACUUM's guards for rollbacks and unread files take into account.")
        file_retention = _duration(model, "file_retention", config.get("file_retention"), DEFAULT_FILE_RETENTION)
        log_retention = _duration(model, "log_retention", config.get("log_retention"), DEFAULT_LOG_RETENTION)
        rollback_window = str(config.get("rollback_window") or DEFAULT_ROLLBACK_WINDOW)
        return cls(enabled, file_retention, log_retention, rollback_window)


def _duration(model: str, setting: str, value: Any, default: str) -> str:
    if value in (None, ""):
        return default
    if not isinstance(value, str) or parse_duration_seconds(value) is None:
        raise MaintenanceConfigError(
            f"Model {model}: {setting} {value!r} is not a duration; give e.g. {EXAMPLES}.")
    return value
