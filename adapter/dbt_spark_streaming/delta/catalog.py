"""What `dbt docs generate` shows of a streaming model: its output mode, trigger and checkpoint
(and a cdc_table's keys, sequence and how it is stored).

The materialisation records them on the model's Delta table as table properties (only when they
change, as each change is a Delta commit); the adapter reads them back when dbt builds its
catalog and hands them over as table stats, which the docs site lists under the model's details.
"""

from __future__ import annotations

from typing import Any, Mapping

from pyspark.sql import SparkSession

from dbt_spark_streaming.delta import tables as delta_tables

USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"

# table property -> label in the docs
SHOWN = {
    "streaming.output_mode": "Output mode",
    "streaming.trigger": "Trigger",
    "streaming.checkpoint": "Checkpoint",
    "copy_into.load_log": "Load log",
    "cdc.stored_as": "Stored as",
    "cdc.keys": "Keys",
    "cdc.sequence_by": "Sequence by",
    "cdc.apply_as_deletes": "Deletes",
    "expectations": "Expectations",
}


def record(
    spark: SparkSession,
    table: str,
    properties: Mapping[str, str],
    current: Mapping[str, str] | None = None,
    user_metadata: str | None = None,
) -> None:
    """Set the properties that differ from the table's `current` ones (read from its Delta log
    when not given); `user_metadata`: said in the commit's history entry."""
    if current is None:
        current = delta_tables.snapshot(spark, table).properties
    changed = {key: str(value) for key, value in properties.items() if current.get(key) != str(value)}
    if not changed:
        return
    assignments = ", ".join(f"'{key}' = '{_quoted(value)}'" for key, value in changed.items())
    if user_metadata is not None:
        spark.conf.set(USER_METADATA, user_metadata)
    try:
        spark.sql(f"alter table {table} set tblproperties ({assignments})")
    finally:
        if user_metadata is not None:
            spark.conf.unset(USER_METADATA)


def catalog_stats(properties: Mapping[str, Any]) -> dict[str, Any]:
    """dbt catalog stats entries (`stats:<id>:label|value|description|include`)."""
    stats: dict[str, Any] = {}
    for key, label in SHOWN.items():
        if key in properties:
            stat = key.replace(".", "_")
            stats[f"stats:{stat}:label"] = label
            stats[f"stats:{stat}:value"] = str(properties[key])
            stats[f"stats:{stat}:description"] = f"Delta table property {key}, set by the materialisation"
            stats[f"stats:{stat}:include"] = True
    return stats


def catalog_stats_of(spark: SparkSession, table: str) -> dict[str, Any]:
    """catalog_stats of the table's properties; none for a table that is not Delta, or that
    cannot be read (dbt docs then shows what dbt-spark found)."""
    try:
        return catalog_stats(table_properties(spark, table))
    except Exception:  # noqa: BLE001
        return {}


def table_properties(spark: SparkSession, table: str) -> dict[str, str]:
    return {row["key"]: row["value"] for row in spark.sql(f"show tblproperties {table}").collect()}


def _quoted(value: str) -> str:
    return value.replace("\\", "\\\\").replace("'", "\\'")
