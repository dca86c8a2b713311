"""A cdc_table model's change-feed settings: how a feed of inserts, updates and deletes becomes a
table, as SCD type 1 (the current row per key) or type 2 (every version, with its validity).

The names follow Lakeflow's AUTO CDC (keys, sequence_by, apply_as_deletes, except_columns,
stored_as, track_history_columns, ...), so what users know from there carries over. Read from
the model's config without Spark; `check_columns` checks them against the query's columns when
the model's stream view is created, before any table or checkpoint is touched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from dbt_spark_streaming.errors import ConfigError, StreamingModelError
from dbt_spark_streaming.config.intervals import EXAMPLES, is_interval

STORED_AS = ("scd1", "scd2")
SETTINGS = (
    "keys", "sequence_by", "apply_as_deletes", "apply_as_truncates", "except_columns",
    "ignore_null_updates", "stored_as", "track_history_columns", "track_history_except_columns",
    "start_at_column", "end_at_column", "tombstone_retention", "on_sequence_tie",
)
# Two different changes of one key with the same sequence: the batch stops, or the one landed
# last is kept (sequence_ties.py) and the others counted.
ON_SEQUENCE_TIE = ("fail", "keep_last_landed")
DEFAULT_TOMBSTONE_RETENTION = "2 days"
CHANGE_DATA_FEED = "delta.enableChangeDataFeed"
# A batch's MERGE changes a few rows in every file (keys change at random): with deletion
# vectors it marks the old rows deleted beside the file and writes only the new ones, instead of
# rewriting every file (bench/cdc: 1M keys, 1,000 changes a batch). Given to the tables (the
# model's and its tombstones) when they are created; a table created before keeps its own
# settings (turning them on upgrades its protocol, which older readers cannot read).
DELETION_VECTORS = "delta.enableDeletionVectors"


def table_properties(properties: Mapping[str, str] | None = None) -> dict[str, str]:
    """The properties a cdc_table's tables are created with: deletion vectors on unless the
    model's own `properties` (tblproperties) say otherwise."""
    return {DELETION_VECTORS: "true", **(properties or {})}
_TRUE, _FALSE = (True, "true", "True"), (False, None, "false", "False")


class ChangesConfigError(ConfigError):
    pass


@dataclass(frozen=True)
class ApplyChanges:
    model: str
    keys: tuple[str, ...]
    sequence_by: tuple[str, ...]  # one column, or several compared in order (a struct)
    stored_as: str = "scd1"
    apply_as_deletes: Optional[str] = None
    apply_as_truncates: Optional[str] = None
    except_columns: tuple[str, ...] = ()
    ignore_null_updates: bool = False
    track_history_columns: tuple[str, ...] = ()
    track_history_except_columns: tuple[str, ...] = ()
    start_at_column: str = "__start_at"
    end_at_column: str = "__end_at"
    tombstone_retention: str = DEFAULT_TOMBSTONE_RETENTION
    on_sequence_tie: str = "fail"

    @classmethod
    def from_config(cls, model: str, config: Mapping[str, Any]) -> "ApplyChanges":
        keys = _columns(config.get("keys"))
        if not keys:
            raise ChangesConfigError(
                f"Model {model}: cdc_table needs keys, the columns that identify a row of the "
                "table the feed describes, e.g. keys=['mrn'] (a list for a composite key)."
            )
        sequence_by = _columns(config.get("sequence_by"))
        if not sequence_by:
            raise ChangesConfigError(
                f"Model {model}: cdc_table needs sequence_by, the column that orders the changes "
                "of one key (a sequence number or change timestamp), e.g. sequence_by='lsn', or "
                "a list of columns compared in order, e.g. sequence_by=['changed_at', 'lsn']."
            )
        stored_as = str(config.get("stored_as") or "scd1").lower()
        if stored_as not in STORED_AS:
            raise ChangesConfigError(
                f"Model {model}: stored_as {config.get('stored_as')!r} is not supported. Allowed: "
                "'scd1' (the current row per key) or 'scd2' (every version of a row, with "
                "__start_at and __end_at)."
            )
        changes = cls(
            model=model,
            keys=keys,
            sequence_by=sequence_by,
            stored_as=stored_as,
            apply_as_deletes=_condition(model, "apply_as_deletes", config.get("apply_as_deletes")),
            apply_as_truncates=_condition(model, "apply_as_truncates", config.get("apply_as_truncates")),
            except_columns=_columns(config.get("except_columns")),
            ignore_null_updates=_flag(model, "ignore_null_updates", config.get("ignore_null_updates")),
            track_history_columns=_columns(config.get("track_history_columns")),
            track_history_except_columns=_columns(config.get("track_history_except_columns")),
            start_at_column=str(config.get("start_at_column") or "__start_at"),
            end_at_column=str(config.get("end_at_column") or "__end_at"),
            tombstone_retention=str(config.get("tombstone_retention") or DEFAULT_TOMBSTONE_RETENTION),
            on_sequence_tie=_on_sequence_tie(model, config.get("on_sequence_tie")),
        )
        changes._check_combinations()
        return changes

    def _check_combinations(self) -> None:
        model = self.model
        if self.stored_as == "scd1" and (self.track_history_columns or self.track_history_except_columns):
            raise ChangesConfigError(
                f"Model {model}: track_history_columns and track_history_except_columns choose "
                "which columns make a new version, so they apply to stored_as='scd2' only. "
                "Set stored_as='scd2', or remove them."
            )
        if self.track_history_columns and self.track_history_except_columns:
            raise ChangesConfigError(
                f"Model {model}: give track_history_columns or track_history_except_columns, "
                "not both."
            )
        if self.stored_as == "scd2" and self.apply_as_truncates:
            raise ChangesConfigError(
                f"Model {model}: apply_as_truncates empties an scd1 table; an scd2 table keeps "
                "history, which a truncate would erase. Remove it, or use stored_as='scd1'."
            )
        for setting, columns in (("keys", self.keys), ("sequence_by", self.sequence_by)):
            dropped = [column for column in columns if column in self.except_columns]
            if dropped and (setting == "keys" or self.stored_as == "scd1"):
                why = ("identify the rows" if setting == "keys"
                       else "are kept so that an older change never overwrites a newer one")
                raise ChangesConfigError(
                    f"Model {model}: except_columns drops {', '.join(dropped)}, but the {setting} "
                    f"columns {why}. Remove {', '.join(dropped)} from except_columns."
                )
        if self.start_at_column == self.end_at_column:
            raise ChangesConfigError(
                f"Model {model}: start_at_column and end_at_column are both "
                f"{self.start_at_column!r}; give them different names."
            )
        if not is_interval(self.tombstone_retention):
            raise ChangesConfigError(
                f"Model {model}: tombstone_retention {self.tombstone_retention!r} is not an "
                f"interval; e.g. {EXAMPLES}."
            )

    @property
    def tracks_some_columns(self) -> bool:
        return bool(self.track_history_columns or self.track_history_except_columns)

    def stored_columns(self, feed_columns: Sequence[str]) -> list[str]:
        """The feed's columns the table keeps, in the feed's order."""
        return [column for column in feed_columns if column not in self.except_columns]

    def tracked_columns(self, stored: Sequence[str]) -> list[str]:
        """SCD2: the stored columns whose change starts a new version (not keys)."""
        candidates = [column for column in stored if column not in self.keys]
        if self.track_history_columns:
            return [column for column in candidates if column in self.track_history_columns]
        return [column for column in candidates if column not in self.track_history_except_columns]

    def check_columns(self, feed_columns: Sequence[str]) -> None:
        """Every column a setting names is one the model's query selects."""
        available = list(feed_columns)
        named = [
            ("keys", self.keys), ("sequence_by", self.sequence_by),
            ("except_columns", self.except_columns),
            ("track_history_columns", self.track_history_columns),
            ("track_history_except_columns", self.track_history_except_columns),
        ]
        for setting, columns in named:
            missing = [column for column in columns if column not in available]
            if missing:
                raise ChangesConfigError(
                    f"Model {self.model}: {setting} names {', '.join(missing)}, which the model's "
                    f"query does not select. Its columns: {', '.join(available)}."
                )
        stored = self.stored_columns(available)
        if self.stored_as == "scd2":
            clashing = [c for c in (self.start_at_column, self.end_at_column) if c in stored]
            if clashing:
                raise ChangesConfigError(
                    f"Model {self.model}: the query selects {', '.join(clashing)}, the name of "
                    "an scd2 validity column. Rename the column, or set start_at_column / "
                    "end_at_column."
                )
            if not self.tracked_columns(stored):
                raise ChangesConfigError(
                    f"Model {self.model}: no stored column is tracked for history, so no change "
                    "would ever make a new version. Check track_history_columns / "
                    "track_history_except_columns."
                )

    def tombstones_table(self, table: str) -> str:
        """Where the deletes applied are remembered (writes/cdc/tombstones.py)."""
        return f"{table}__tombstones"

    def companion_tables(self, table: str) -> list[str]:
        return [self.tombstones_table(table)]

    def documented(self) -> dict[str, str]:
        shown = self.shape()
        if self.apply_as_deletes:
            shown["cdc.apply_as_deletes"] = self.apply_as_deletes
        return shown

    def shape(self) -> dict[str, str]:
        """The settings the table's rows are laid out by, as table properties: recorded on the
        table, and compared with the model's before each run (refuse_shape_change)."""
        shape = {
            "cdc.stored_as": self.stored_as,
            "cdc.keys": ", ".join(self.keys),
            "cdc.sequence_by": ", ".join(self.sequence_by),
            "cdc.except_columns": ", ".join(self.except_columns),
        }
        if self.stored_as == "scd2":
            shape.update({
                "cdc.start_at_column": self.start_at_column,
                "cdc.end_at_column": self.end_at_column,
                "cdc.track_history_columns": ", ".join(self.track_history_columns),
                "cdc.track_history_except_columns": ", ".join(self.track_history_except_columns),
            })
        return shape

    def refuse_shape_change(self, table: str, recorded: Mapping[str, str]) -> None:
        """Before anything of a run starts: the table was built with another shape (stored_as,
        keys, sequence_by, validity or tracked columns), which its rows, its tombstones and the
        MERGE's conditions follow; applied in place, the batch would fail or mix the two."""
        changed = [
            (prop.removeprefix("cdc."), recorded[prop], value) for prop, value in self.shape().items()
            if prop in recorded and recorded[prop] != value
        ]
        if not changed:
            return
        said = "; ".join(f"{setting} was {_shown(old)} and is {_shown(new)} now" for setting, old, new in changed)
        raise StreamingModelError(
            f"Model {self.model}: its table {table} was built with other cdc_table settings: "
            f"{said}. The table's rows are laid out by them, so the change cannot be applied in "
            f"place. Rebuild the table from the whole feed: `dbt run --full-refresh --select "
            f"{self.model}+` (the + rebuilds the models that read it too), or put the settings "
            f"back. Nothing was started: the table and its checkpoint are as they were. "
            f"(Settings that can change in place: apply_as_deletes, apply_as_truncates, "
            f"ignore_null_updates, tombstone_retention, on_sequence_tie.)"
        )


def _on_sequence_tie(model: str, value: Any) -> str:
    policy = str(value or "fail").lower()
    if policy not in ON_SEQUENCE_TIE:
        raise ChangesConfigError(
            f"Model {model}: on_sequence_tie {value!r} is not valid. Allowed: 'fail' (the default: "
            "two different changes of one key with the same sequence_by value stop the batch) or "
            "'keep_last_landed' (the one that landed last is kept, the others counted)."
        )
    return policy


def _shown(value: str) -> str:
    return repr(value) if value else "not set"


def _columns(value: Any) -> tuple[str, ...]:
    if not value:
        return ()
    return (value,) if isinstance(value, str) else tuple(str(column) for column in value)


def _condition(model: str, setting: str, value: Any) -> Optional[str]:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ChangesConfigError(
            f"Model {model}: {setting} {value!r} is not a SQL condition; give one as text, "
            "e.g. \"op = 'D'\"."
        )
    return value


def _flag(model: str, setting: str, value: Any) -> bool:
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ChangesConfigError(f"Model {model}: {setting} {value!r} is not valid; give true or false.")
