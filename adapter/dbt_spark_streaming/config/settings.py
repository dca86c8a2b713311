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
from typing import Mapping

from dbt_spark_streaming.config import cdc as changes  # Every streaming materialisation: the Delta table's layout and properties, a new column, and
# the rules each row is checked by.
_TABLE = ("partition_by", "tblproperties", "on_schema_change", "expectations", "quarantine_table")
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
