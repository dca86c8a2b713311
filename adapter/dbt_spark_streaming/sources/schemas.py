"""The schema of a file source: declared in YAML, or inferred once and stored beside the checkpoints.

An inferred schema is kept as numbered versions under
`<checkpoint root>/_source_schemas/<target schema>/<source>/` (`0.json`, `1.json`, ...), so every
run of a target reads the files the same way instead of guessing again. Each dbt target keeps its
own, with the time of its last check: a check run by dev moves nothing of production's.
What happens when newly landed files bring a column the schema does not have is the source's
`schema_evolution` policy:

- `add_new_columns` (default for an inferred schema): the column is added, nullable, at the end;
  a new schema version is stored and the run reads with it. Models that `select *` carry it
  into their tables with `on_schema_change: append_new_columns`.
- `rescue` (default for a declared schema with `rescued_data_column`; json only): the schema stays,
  the new fields are kept as JSON text in the rescued-data column.
- `fail_on_new_columns` (default for any other declared schema): the run stops, naming the
  columns, the files and the fixes.
- `none`: new columns are ignored (Spark's own behaviour; their values are not read).

Only files modified after the last check are examined, so a run costs what landed since.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional

from pyspark.sql import SparkSession
from pyspark.sql.types import StructField, StructType

from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.config.sources import POLICIES, default_policy  # noqa: F401  (where tests read them)
from dbt_spark_streaming.errors import ConfigError

_CHECKED = "checked_until.json"


class SourceSchemaError(ConfigError):
    pass


@dataclass(frozen=True)
class SchemaVersion:
    number: int
    schema: StructType


class SchemaStore:
    """Schema versions and the newest file modification time examined, for one source."""

    def __init__(self, spark: SparkSession, folder: str):
        self.spark = spark
        self.folder = folder

    @classmethod
    def of_target(cls, spark: SparkSession, folder: str, shared: str) -> "SchemaStore":
        """A target's store; begun, the first time, as a copy of the store every target shared
        before each had its own, so that no target infers again what it already read with."""
        if folder != shared and not hadoop_fs.exists(spark, folder) and hadoop_fs.exists(spark, f"{shared}/0.json"):
            hadoop_fs.copy_tree(spark, shared, folder)
        return cls(spark, folder)

    def latest(self) -> Optional[SchemaVersion]:
        numbers = [
            int(name[:-5]) for name in hadoop_fs.list_names(self.spark, self.folder)
            if name.endswith(".json") and name[:-5].isdigit()
        ]
        if not numbers:
            return None
        number = max(numbers)
        text = hadoop_fs.read_text(self.spark, f"{self.folder}/{number}.json")
        return SchemaVersion(number, StructType.fromJson(json.loads(text)["schema"]))

    def save(self, number: int, schema: StructType, added: list[str]) -> None:
        record = {"schema": schema.jsonValue(), "columns_added": added}
        hadoop_fs.write_text(self.spark, f"{self.folder}/{number}.json", json.dumps(record, indent=1))

    def checked_until(self) -> int:
        location = f"{self.folder}/{_CHECKED}"
        if not hadoop_fs.exists(self.spark, location):
            return -1
        return int(json.loads(hadoop_fs.read_text(self.spark, location))["modification_time_ms"])

    def mark_checked(self, modification_time_ms: int) -> None:
        hadoop_fs.write_text(
            self.spark, f"{self.folder}/{_CHECKED}",
            json.dumps({"modification_time_ms": modification_time_ms}),
        )


def current_schema(
    spark: SparkSession,
    source_name: str,
    reader,  # a DataFrameReader for the source's format and options
    path: str,
    store: SchemaStore,
    declared: Optional[StructType],
    policy: str,
) -> StructType:
    """The schema this run reads the source with, after applying the policy to new files."""
    if declared is not None and policy in ("rescue", "none"):
        return declared  # nothing to infer or check: no listing of the landing folder
    files = hadoop_fs.list_data_files(spark, path)
    stored = store.latest()
    if declared is None and stored is None:
        if not files:
            raise SourceSchemaError(
                f"Source {source_name}: no schema is declared and no files have landed in {path} "
                "to infer one from. Land a file first, or declare meta.stream.schema."
            )
        schema = reader.load([file.path for file in files]).schema
        store.save(0, schema, added=[])
        store.mark_checked(max(file.modification_time_ms for file in files))
        return schema
    schema = declared if declared is not None else stored.schema
    if policy in ("rescue", "none"):
        return schema
    since = store.checked_until()
    new_files = [file.path for file in files if file.modification_time_ms > since]
    if not new_files:
        return schema
    known = {field.name.lower() for field in schema.fields}
    added = [field for field in reader.load(new_files).schema.fields if field.name.lower() not in known]
    if added and policy == "fail_on_new_columns":
        raise SourceSchemaError(
            f"Source {source_name}: newly landed files have column(s) "
            f"{', '.join(field.name for field in added)} that the schema does not name "
            f"(schema_evolution: fail_on_new_columns). Add them to meta.stream.schema, or set "
            "schema_evolution to rescue (json, with rescued_data_column) or add_new_columns "
            "(with an inferred schema)."
        )
    if added:
        schema = StructType(schema.fields + [StructField(f.name, f.dataType, True) for f in added])
        number = stored.number + 1 if stored else 0
        store.save(number, schema, added=[field.name for field in added])
        print(
            f"Source {source_name}: new column(s) {', '.join(f.name for f in added)} added to its "
            f"schema (version {number}, {store.folder}/{number}.json).",
            flush=True,
        )
    store.mark_checked(max(file.modification_time_ms for file in files))
    return schema
