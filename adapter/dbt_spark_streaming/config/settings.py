"""The settings of the streaming materialisations, declared once, per materialisation.

dbt keeps any key in a model's config, so a misspelt setting (`outptu_mode='append'`) would be
ignored and the model would run on the default. config/model.py refuses every key of a
streaming model's config that is neither declared here for its materialisation nor one of
dbt's own model configs, which are read from the classes dbt and dbt-spark declare them in
(dbt's ModelConfig, dbt-spark's SparkConfig) rather than listed by hand. No Spark needed.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Mapping, NamedTuple

from dbt_spark_streaming.config import cdc as changes
from dbt_spark_streaming.config import maintenance

# Every streaming materialisation: the Delta table's layout and properties, a new column, the
# rules each row is checked by, and the table's upkeep.
_TABLE = ("partition_by", "tblproperties", "on_schema_change", "expectations", "quarantine_table",
          *maintenance.SETTINGS)
# The ones that run a streaming query, each from a checkpoint of its own.
_STREAM = ("trigger", "checkpoint_location", "watermark", "dedupe", "on_query_change", "target_lag")

SETTINGS: Mapping[str, tuple[str, ...]] = {
    "streaming_table": (
        "output_mode", "unique_key", *_STREAM, *_TABLE, "backfills", "rollback_window",
    ),
    # The change-feed settings are changes.SETTINGS, read there.
    "cdc_table": (*changes.SETTINGS, *_STREAM, *_TABLE),
    "copy_into": ("load_log_location", "force", *_TABLE),
}

# Keys a materialisation reads although they are not its settings: a folder's
# `+output_mode: append` or `+rollback_window` covers every model of the folder, and the one
# value that fits is accepted; any other is refused with the reason (config/model.py,
# backfills.py).
ALSO_READ: Mapping[str, tuple[str, ...]] = {
    "cdc_table": ("output_mode", "backfills", "rollback_window"),
    "copy_into": ("output_mode", "backfills"),
}

# Names people reach for that no spelling distance finds (Spark's, Lakeflow's, other tools'):
# each suggested where the materialisation has the setting it points to.
LOOKALIKES: Mapping[str, str] = {
    "mode": "output_mode", "deduplicate": "dedupe", "primary_key": "keys",
    "order_by": "sequence_by", "scd_type": "stored_as", "checkpoint": "load_log_location",
    "checkpoint_location": "load_log_location", "reload": "force",
    "lag": "target_lag", "max_lag": "target_lag", "freshness_target": "target_lag",
}

# Keys dbt's and dbt-spark's own macros read from a model's config that no config class
# declares: set_sql_header() stores `sql_header`, the incremental materialisation reads the rest.
_DBT_MACRO_CONFIGS = ("sql_header", "incremental_predicates", "predicates", "merge_exclude_columns")


def allowed(materialized: str) -> frozenset[str]:
    """Every key a model of this materialisation may have in its config."""
    return frozenset((*SETTINGS[materialized], *ALSO_READ.get(materialized, ()))) | dbt_configs()


def owners(key: str) -> list[str]:
    """The streaming materialisations that have `key` as a setting."""
    return [materialized for materialized, keys in SETTINGS.items() if key in keys]


@cache
def dbt_configs() -> frozenset[str]:
    """The configs dbt and dbt-spark give a model, as dbt puts them in a node's config: each
    field of dbt's ModelConfig (with its alias, `pre-hook` for pre_hook) and of dbt-spark's
    SparkConfig (file_format, location_root, clustered_by, ...)."""
    from dbt.adapters.spark.impl import SparkConfig
    from dbt.artifacts.resources import ModelConfig as DbtModelConfig

    names = set(_DBT_MACRO_CONFIGS)
    for config_class in (DbtModelConfig, SparkConfig):
        for field in dataclasses.fields(config_class):
            if not field.name.startswith("_"):  # _extra: where dbt keeps the keys it does not know
                names.add(field.name)
                names.update(alias for alias in [field.metadata.get("alias")] if alias)
    return frozenset(names)


class Description(NamedTuple):
    """A setting as the config reference shows it: what it does, and its default."""
    what: str
    default: str = "none"


# One line per setting of SETTINGS (and cdc's), for docs/config-reference.md, which
# python_runners/ops/config_reference.py writes from them; `make lint` fails on a setting
# declared above without one here.
DESCRIPTIONS: Mapping[str, Description] = {
    "output_mode": Description(
        "`'append'` (each input row written once), `'complete'` (an aggregate rewritten each batch) "
        "or `'update'` (each batch's changed aggregate rows MERGEd by `unique_key`)", "`'append'`"),
    "unique_key": Description(
        "a column or list of columns identifying a row; required by `'update'`"),
    "trigger": Description(
        "`{'available_now': true}`, `{'once': true}`, `{'processing_time': '4 seconds'}` or "
        "`{'on_new_data': true}` (served: run again each time an input commits); for a whole run: "
        "`--vars '{stream_trigger: ...}'`", "`{'available_now': true}`"),
    "checkpoint_location": Description(
        "where the model's checkpoint is (relative: under the checkpoint root); each model needs "
        "its own", "`<checkpoint root>/<schema>/<model>`"),
    "watermark": Description(
        "`{'column': 'recorded_at', 'delay': '10 minutes'}`, or a list of those (one per event-time "
        "column); each goes on the streaming inputs that have its column"),
    "dedupe": Description(
        "`{'keys': ['recording_id'], 'within_watermark': true}`: a row whose keys were already seen "
        "is dropped (needs a watermark; `within_watermark: false` keeps every key forever)"),
    "on_query_change": Description(
        "when the model's SQL or row-shaping settings changed since its last run: "
        "`'apply_to_new_rows'` (run on, said in the output and the table's history), `'fail'` "
        "(stop, saying what changed) or `'redeploy'` (streaming_table only: the new version built "
        "beside the table from the start of its inputs, swapped in once caught up); "
        "[changing models](changing-models.md)", "`'apply_to_new_rows'`"),
    "target_lag": Description(
        "`'5 seconds'`: how far behind its inputs a served model may fall; measured, shown by "
        "`dbt-spark-streaming status` and `_stream_progress`, said on the terminal when missed"),
    "partition_by": Description("a column or list of columns the Delta table is partitioned by"),
    "tblproperties": Description(
        "Delta table properties, e.g. `{'delta.appendOnly': 'true'}`; a cdc_table's tables get "
        "deletion vectors unless these say otherwise"),
    "on_schema_change": Description(
        "`'fail'` (a column the table lacks stops the write) or `'append_new_columns'` (added to "
        "the Delta table)", "`'fail'`"),
    "expectations": Description(
        "`[{name, expression, action: warn|drop|quarantine|fail}, ...]`: rules checked on every row "
        "as it is written (a cdc_table's: the feed's rows); [expectations](expectations.md)"),
    "quarantine_table": Description(
        "where rows a `quarantine` rule sets aside go (a name, or `schema.name`)",
        "`<model>__quarantine`"),
    "backfills": Description(
        "`[{name, path | table, format, options}, ...]`: history the stream never sees, run through "
        "the model's SQL and appended once, the checkpoint untouched (append mode only)"),
    "rollback_window": Description(
        "how long a redeploy keeps the old version to roll back to "
        "(`dbt-spark-streaming rollback --select <model>`)", "`'7 days'`"),
    "maintenance": Description(
        "`false`: neither the service nor `dbt-spark-streaming maintain` compacts or VACUUMs the "
        "table; [maintenance](maintenance.md)", "`true`"),
    "file_retention": Description(
        "how long a file the table no longer uses stays for readers of older versions, and how "
        "long Delta's checkpoints remember its removal; VACUUM keeps longer what a rollback or an "
        "unread stream needs", f"`'{maintenance.DEFAULT_FILE_RETENTION}'`"),
    "log_retention": Description(
        "how far back the table's history reaches (time travel, DESCRIBE HISTORY): maintenance "
        "deletes older log files unless a rollback inside `rollback_window` or a stream not yet "
        "caught up needs them; a longer history slows each commit on local and HDFS storage",
        f"`'{maintenance.DEFAULT_LOG_RETENTION}'`"),
    # cdc_table's change feed (config/cdc.py); names after Lakeflow's AUTO CDC
    "keys": Description("a column or list of columns identifying a row of the described table",
                        "required"),
    "sequence_by": Description(
        "the column that orders a key's changes, or a list of columns compared in order "
        "(`['changed_at', 'lsn']` orders by time, then by lsn)", "required"),
    "apply_as_deletes": Description(
        "a SQL condition over the feed's columns marking a delete, e.g. `\"op = 'D'\"`", "no deletes"),
    "apply_as_truncates": Description(
        "a SQL condition marking a truncate of the whole table (`scd1` only); a truncate row needs "
        "no key"),
    "except_columns": Description("feed columns not stored, e.g. `['op']`"),
    "ignore_null_updates": Description(
        "`true`: a null in a change keeps the stored value (feeds that send only the changed "
        "columns)", "`false`"),
    "stored_as": Description(
        "`'scd1'` (the current row per key) or `'scd2'` (every version, with its validity)",
        "`'scd1'`"),
    "track_history_columns": Description(
        "`scd2`: only a change to these columns makes a new version", "every column"),
    "track_history_except_columns": Description(
        "`scd2`: a change to any column but these makes a new version", "every column"),
    "start_at_column": Description("`scd2`: the name of the column a version is valid from",
                                   "`__start_at`"),
    "end_at_column": Description("`scd2`: the name of the column a version is valid until",
                                 "`__end_at`"),
    "tombstone_retention": Description(
        "how long a delete is remembered against late, older changes", "`'2 days'`"),
    "on_sequence_tie": Description(
        "two different changes of one key with the same `sequence_by`: `'fail'` stops the batch "
        "naming the key, `'keep_last_landed'` keeps the one landed last and counts the others",
        "`'fail'`"),
    # copy_into's own
    "load_log_location": Description(
        "where the Delta log of the files loaded is kept; query it with "
        "``select * from delta.`<location>` ``", "`<checkpoint root>/<schema>/<model>`"),
    "force": Description(
        "`true` reloads every file in the folder once (for one run: `--vars '{copy_into_force: "
        "true}'`); loaded rows are appended again", "`false`"),
}
