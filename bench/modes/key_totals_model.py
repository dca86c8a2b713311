"""The benchmarked model: an aggregate of one batch shape over a streaming Delta source, as temp views.

The same shape as a dbt streaming_table model: the source is a streaming temp view, the model's
SQL is a temp view over it, and that view is what a StreamingWrite reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from pyspark.sql import SparkSession

from bench.modes.batch_shapes import BatchShape
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.config.streaming_table import StreamingTableConfig
from dbt_spark_streaming.writes.streaming import StreamingWrite
from dbt_spark_streaming.config.triggers import AVAILABLE_NOW

SCHEMA = "bench"


@dataclass(frozen=True)
class Variant:
    """An output mode as benchmarked, with the target table properties it gets (the tblproperties config)."""

    name: str
    output_mode: str
    table_properties: Mapping[str, str] = field(default_factory=dict)


UPDATE = Variant("update", "update")
COMPLETE = Variant("complete", "complete")
# Delta's MERGE rewrites every data file holding a matched key; with deletion vectors it marks
# the old rows deleted instead and writes only the changed ones.
UPDATE_WITH_DELETION_VECTORS = Variant(
    "update_dv", "update", {"delta.enableDeletionVectors": "true"}
)


@dataclass(frozen=True)
class KeyTotalsModel:
    """One benchmark shape and size: its source table, views and one target table per variant."""

    shape: BatchShape
    keys: int

    @property
    def name(self) -> str:
        return f"{self.shape.name}_{self.keys}"

    @property
    def source_table(self) -> str:
        return f"{SCHEMA}.source_{self.name}"

    @property
    def model_view(self) -> str:
        """The model's SQL as a temp view over `source_stream_<name>`, the source's streaming view."""
        return f"totals_{self.name}"

    def target_name(self, variant: Variant) -> str:
        return f"totals_{self.shape.name}_{variant.name}_{self.keys}"

    def target_table(self, variant: Variant) -> str:
        return f"{SCHEMA}.{self.target_name(variant)}"

    def register_views(self, spark: SparkSession) -> None:
        """Call once the source table exists: a Delta stream needs the table to read its schema."""
        stream_view = f"source_stream_{self.name}"
        spark.readStream.name("input").table(self.source_table).createOrReplaceTempView(stream_view)
        spark.sql(self.shape.model_sql.format(stream=stream_view)).createOrReplaceTempView(self.model_view)

    def streaming_write(self, lakehouse: Lakehouse, variant: Variant) -> StreamingWrite:
        config = StreamingTableConfig(
            model=self.target_name(variant),
            materialized="streaming_table",
            output_mode=variant.output_mode,
            trigger=AVAILABLE_NOW,
            checkpoint=lakehouse.checkpoint_path(f"{SCHEMA}/{self.target_name(variant)}"),
            tblproperties=variant.table_properties,
            unique_key=self.shape.unique_key if variant.output_mode == "update" else (),
        )
        return StreamingWrite(config=config, source_view=self.model_view, target_table=self.target_table(variant))
