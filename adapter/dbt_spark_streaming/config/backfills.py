"""A streaming_table's backfills: historical data appended once, through the model's own SQL.

`backfills: [{name: archive_2025, path: archive/2025, format: json, options: {...}}]` (or
`table: <a Delta table>` instead of `path`) in an append-mode model's config. Each is run by
writes/backfill.py as a batch query of the model's SQL with its streaming input replaced by the
historical data, appended under a Delta transaction tied to its name, so a later run skips it.
The checkpoint is never read or written. Read and checked here, with the model's other settings
(config/model.py); no Spark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from dbt_spark_streaming.config.names import is_identifier
from dbt_spark_streaming.errors import ConfigError

FORMATS = ("json", "csv", "parquet", "delta")
KEYS = ("name", "path", "table", "format", "options")
# The Delta transaction ids of backfill appends start with it.
BACKFILL_APP_ID_PREFIX = "backfill:"
_SHAPE = ("[{name: archive_2025, path: <folder>, format: json|csv|parquet|delta, options: {...}}] "
          "(or table: <a Delta table> instead of path and format)")


class BackfillConfigError(ConfigError):
    pass


@dataclass(frozen=True)
class Backfill:
    name: str
    format: str
    path: Optional[str] = None  # a folder (relative: under the landing folder), or
    table: Optional[str] = None  # a Delta table by name
    options: Mapping[str, str] = field(default_factory=dict)

    @property
    def app_id(self) -> str:
        """The Delta transaction id its append commits under (one per table, so the name is enough)."""
        return f"{BACKFILL_APP_ID_PREFIX}{self.name}"

    @property
    def where(self) -> str:
        return f"table {self.table}" if self.table else f"{self.format} files at {self.path}"


# Why each kind of model cannot take a one-time append of history.
_NOT_APPEND = {
    "complete": "each batch rewrites the whole table with the aggregate of all input, so "
                "appended rows would be overwritten by the next batch",
    "update": "each batch's changed aggregate rows are merged by unique_key, so appended history "
              "would be a second, unmerged set of rows per key",
    "cdc_table": "a cdc_table applies change rows by keys and sequence_by; load history as "
                 "change rows into the feed it reads instead",
    "copy_into": "a copy_into model already loads every file of its folder once; copy the "
                 "historical files there (or into a second copy_into model's folder) instead",
}


def backfills_from_config(
    model: str, materialized: str, output_mode: str, configured: Any
) -> tuple[Backfill, ...]:
    """The model's backfills, each checked; () when it has none. Errors name the model, the
    backfill and the setting."""
    if configured in (None, [], ()):
        return ()
    reason = _NOT_APPEND.get(materialized) or _NOT_APPEND.get(output_mode)
    if reason:
        kind = materialized if materialized != "streaming_table" else f"output_mode {output_mode!r}"
        raise BackfillConfigError(
            f"Model {model}: backfills append historical rows once, which needs a streaming_table "
            f"in output_mode 'append'; this model is {kind}: {reason}. Remove backfills."
        )
    if not isinstance(configured, (list, tuple)):
        raise BackfillConfigError(f"Model {model}: backfills must be a list, e.g. {_SHAPE}.")
    backfills = [_backfill(model, index, entry) for index, entry in enumerate(configured)]
    names = [backfill.name for backfill in backfills]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise BackfillConfigError(
            f"Model {model}: backfill name {repeated[0]!r} is used twice; each backfill needs a "
            "name of its own (it is what marks it applied)."
        )
    return tuple(backfills)


def _backfill(model: str, index: int, entry: Any) -> Backfill:
    if not isinstance(entry, Mapping):
        raise BackfillConfigError(
            f"Model {model}: backfills[{index}] is {entry!r}; each backfill is a mapping, e.g. {_SHAPE}."
        )
    name = entry.get("name")
    if not is_identifier(name):
        raise BackfillConfigError(
            f"Model {model}: backfills[{index}] needs a name of letters, digits and underscores "
            f"(it marks the backfill applied in the table's Delta log), got {name!r}."
        )
    where = f"Model {model}: backfill {name}"
    unknown = sorted(set(map(str, entry)) - set(KEYS))
    if unknown:
        raise BackfillConfigError(
            f"{where}: {unknown[0]!r} is not a backfill setting; settings: {', '.join(KEYS)}. "
            "Reader options go under options."
        )
    path, table = entry.get("path"), entry.get("table")
    if bool(path) == bool(table):
        raise BackfillConfigError(
            f"{where}: give either path (a folder, or a Delta table's location) or table (a Delta "
            "table's name), " + ("not both." if path else "neither is set.")
        )
    fmt = str(entry.get("format") or ("delta" if table else "")).lower()
    if table and fmt != "delta":
        raise BackfillConfigError(f"{where}: a table is read as Delta; remove format {fmt!r} or give path.")
    if fmt not in FORMATS:
        raise BackfillConfigError(
            f"{where}: format {entry.get('format')!r} is not supported; use one of {', '.join(FORMATS)}."
        )
    options = entry.get("options") or {}
    if not isinstance(options, Mapping):
        raise BackfillConfigError(
            f"{where}: options must be a mapping of reader options, e.g. {{header: true}}; got {options!r}."
        )
    return Backfill(
        name=name, format=fmt, path=str(path) if path else None, table=str(table) if table else None,
        options={str(key): _option_value(value) for key, value in options.items()},
    )


def _option_value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
