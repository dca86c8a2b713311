"""A model's table maintenance settings, read and checked once: `maintenance`, `file_retention`,
`log_retention` (lifecycle/maintenance.py does the work).

- `file_retention`: how long a file the table no longer uses (compacted away, rewritten by a
  complete-mode batch or a MERGE) stays on disk for readers of older versions, and how long Delta
  remembers its removal in each checkpoint of the log (`delta.deletedFileRetentionDuration`).
  VACUUM keeps longer what a rollback or a stream not yet caught up still needs.
- `log_retention`: how long Delta keeps the log's history (`delta.logRetentionDuration`); a
  rollback within `rollback_window` needs the version before the redeploy, so it is never shorter.

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
    log_retention: str = DEFAULT_ROLLBACK_WINDOW

    @property
    def file_retention_seconds(self) -> float:
        return parse_duration_seconds(self.file_retention) or 0.0

    def table_properties(self) -> dict[str, str]:
        return {FILE_RETENTION_PROPERTY: f"interval {self.file_retention}",
                LOG_RETENTION_PROPERTY: f"interval {self.log_retention}"}

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
        rollback_window = config.get("rollback_window") or DEFAULT_ROLLBACK_WINDOW
        log_retention = _duration(model, "log_retention", config.get("log_retention"), str(rollback_window))
        rollback_seconds = parse_duration_seconds(rollback_window)
        if rollback_seconds is not None and parse_duration_seconds(log_retention) < rollback_seconds:
            raise MaintenanceConfigError(
                f"Model {model}: log_retention {log_retention!r} is shorter than its rollback_window "
                f"{rollback_window!r}. A rollback restores the table's version from before its last "
                "redeploy, which needs Delta's log of that version for the whole window. Give "
                f"log_retention={rollback_window!r} or longer, or a shorter rollback_window.")
        return cls(enabled, file_retention, log_retention)


def _duration(model: str, setting: str, value: Any, default: str) -> str:
    if value in (None, ""):
        return default
    if not isinstance(value, str) or parse_duration_seconds(value) is None:
        raise MaintenanceConfigError(
            f"Model {model}: {setting} {value!r} is not a duration; give e.g. {EXAMPLES}.")
    return value
