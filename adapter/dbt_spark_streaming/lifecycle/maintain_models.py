"""`dbt-spark-streaming maintain` (`dbt run-operation maintain_tables`): every streaming model's
table, or the ones selected, maintained once (lifecycle/maintenance.py), for projects run by
`dbt run` rather than served, and without a selection the target's progress table
(progress/table.py), which each run appends to. One model whose maintenance fails does not stop
the others; the command fails at the end, naming them."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from pyspark.sql import SparkSession

from dbt_spark_streaming.config.model import read_model_config
from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.errors import StreamingModelError, root_cause
from dbt_spark_streaming.lifecycle.maintenance import Upkeep, maintain, reader_positions
from dbt_spark_streaming.progress import table as progress_table
from dbt_spark_streaming.session import take_run_lock

# A user who runs the command asks for compaction: any table with small files to bin gets it.
COMPACT_AT_FILES = 2


def maintain_models(spark: SparkSession, models: Sequence[tuple[Mapping[str, Any], str]],
                    graph: Mapping[str, Any], run_vars: Mapping[str, Any], with_progress_table: bool = False) -> str:
    """`models`: (node, its table's name); what was done, a line per model (and for the
    progress table, with `with_progress_table`, once it exists)."""
    take_run_lock()  # no run or service writes these tables meanwhile
    readers = reader_positions(spark)
    said, failed = [], []
    for node, table in models:
        try:
            config = read_model_config(node, graph, run_vars)
            if not spark.catalog.tableExists(table):
                said.append(f"{config.model}: no table yet (it has not run)")
                continue
            upkeep = Upkeep.of(config, table, delta_tables.location(spark, table))
            said.append(maintain(spark, upkeep, readers, compact_at=COMPACT_AT_FILES).said())
        except Exception as error:  # the others are maintained all the same
            failed.append(node["name"])
            said.append(f"{node['name']}: FAILED: {root_cause(error)}")
    progress = progress_table.table_name()
    if with_progress_table and spark.catalog.tableExists(progress):
        try:
            upkeep = Upkeep.unowned(progress, delta_tables.location(spark, progress))
            said.append(maintain(spark, upkeep, readers, compact_at=COMPACT_AT_FILES).said())
        except Exception as error:
            failed.append(progress)
            said.append(f"{progress}: FAILED: {root_cause(error)}")
    if failed:
        raise StreamingModelError("\n".join(said) + f"\nMaintenance failed for {', '.join(failed)}.")
    return "\n".join(said) if said else "No streaming model selected."
