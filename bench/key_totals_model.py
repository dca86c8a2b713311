"""The benchmarked model: a per-key aggregate over a streaming Delta source, as temp views.

The same shape as a dbt streaming_table model: the source is a streaming temp view, the model's
SQL is a temp view over it, and that view is what a StreamingWrite reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from pyspark.sql import SparkSession

from python_runners.lakehouse import Lakehouse
from python_runners.streaming_writes import StreamingWrite
from python_runners.triggers import AVAILABLE_NOW

SCHEMA = "bench"
MODEL_SQL = "select key, count(*) as n, sum(value) as total from {stream} group by key"
UNIQUE_KEY = ("key",)


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
    """One benchmark size: its source table, views and one target table per variant."""

    keys: int

    @property
    def source_table(self) -> str:
        return f"{SCHEMA}.source_{self.keys}"

    @property
    def stream_view(self) -> str:
        return f"source_stream_{self.keys}"

    @property
    def model_view(self) -> str:
        return f"key_totals_{self.keys}"

    def target_table(self, variant: Variant) -> str:
        return f"{SCHEMA}.key_totals_{variant.name}_{self.keys}"

    def register_views(self, spark: SparkSession) -> None:
        """Call once the source table exists: a Delta stream needs the table to read its schema."""
        spark.readStream.table(self.source_table).createOrReplaceTempView(self.stream_view)
        spark.sql(MODEL_SQL.format(stream=self.stream_view)).createOrReplaceTempView(self.model_view)

    def streaming_write(self, lakehouse: Lakehouse, variant: Variant) -> StreamingWrite:
        return StreamingWrite(
            model=f"key_totals_{variant.name}_{self.keys}",
            source_view=self.model_view,
            target_table=self.target_table(variant),
            output_mode=variant.output_mode,
            trigger=AVAILABLE_NOW,
            checkpoint=lakehouse.checkpoint_path(f"{SCHEMA}/key_totals_{variant.name}_{self.keys}"),
            table_properties=variant.table_properties,
            unique_key=UNIQUE_KEY if variant.output_mode == "update" else (),
        )
