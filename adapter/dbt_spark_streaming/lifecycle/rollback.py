"""Rollback of a redeploy (`dbt-spark-streaming rollback --select m`): the table restored to
its version before the swap (Delta RESTORE, one commit) and the old checkpoint put back, within
`rollback_window` of the swap; readers are rebuilt again on their next run (redeploy.py)."""

from __future__ import annotations

from dataclasses import replace

from pyspark.sql import SparkSession

from dbt_spark_streaming.config.materializations import REDEPLOYABLE_MATERIALIZATIONS
from dbt_spark_streaming.config.model import read_model_config
from dbt_spark_streaming.delta import catalog as streaming_catalog
from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.lifecycle import checkpoint_names, redeploy
from dbt_spark_streaming.session import claim_lakehouse_for
from dbt_spark_streaming.writes.streaming import StreamingWrite


def roll_back(spark: SparkSession, write: "StreamingWrite") -> str:
    """The model's table and checkpoint as they were before its last redeploy's swap; what was
    done, to print. A redeploy still being built is redeploy.discarded instead."""
    state = redeploy.read_state(spark, write.checkpoint)
    if state is None:
        raise StreamingModelError(
            f"Model {write.model}: there is no redeploy to roll back (none was made, or its "
            f"rollback_window of {write.config.rollback_window} has passed and the old checkpoint was removed)."
        )
    if state.step == redeploy.BUILDING:
        redeploy.discard(spark, write)
        return (f"Model {write.model}: its redeploy {state.id} was still being built; it was "
                f"redeploy.discarded and the table was left as it was.")
    if state.step in (redeploy.SWAPPING, redeploy.SWAPPED):
        state = redeploy.swap_and_finish(spark, write, state)
    previous = redeploy.previous_checkpoint(write.checkpoint)
    if state.step == redeploy.DONE and not hadoop_fs.exists(spark, previous):
        raise StreamingModelError(
            f"Model {write.model}: the checkpoint from before redeploy {state.id} is gone "
            f"({previous}), so it cannot be rolled back."
        )
    state = redeploy.save(spark, write.checkpoint, replace(state, step=redeploy.ROLLING_BACK))
    table = write.target_table
    if delta_tables.snapshot(spark, table).properties.get(redeploy.ROLLED_BACK) != state.id:
        _restore(spark, write.model, table, state.table_version)
        restored = delta_tables.snapshot(spark, table)
        # The restored generation stays: the rows restored hold its backfills, and Delta's
        # transaction ids (not rewound) keep them from being appended again.
        streaming_catalog.record(spark, table, {redeploy.REPLACED_AT: str(restored.version), redeploy.ROLLED_BACK: state.id},
                                 current=restored.properties)
    quarantine = write.quarantine_table
    if quarantine is not None and state.quarantine_version >= 0:
        _restore(spark, write.model, quarantine, state.quarantine_version)
    elif quarantine is not None:
        delta_tables.drop_if_exists(spark, quarantine)  # the redeploy brought it
    if hadoop_fs.exists(spark, previous):
        hadoop_fs.delete(spark, write.checkpoint)
        hadoop_fs.rename(spark, previous, write.checkpoint)
        checkpoint_names.forget(write.checkpoint)
    hadoop_fs.delete(spark, redeploy.state_path(write.checkpoint))
    return (
        f"Model {write.model}: rolled back to version {state.table_version} of {table}, from "
        f"before redeploy {state.id}, with its old checkpoint; its next run goes on from there. "
        f"The model's SQL is still the new one: revert it, or the next run redeploys it again. "
        f"Models that stream from it are rebuilt on their next run."
    )


def _restore(spark: SparkSession, model: str, table: str, version: int) -> None:
    try:
        spark.sql(f"restore table {table} to version as of {version}")
    except Exception as error:
        raise StreamingModelError(
            f"Model {model}: could not restore {table} to version {version}: {error}. If VACUUM "
            f"removed that version's files, it cannot be rolled back."
        ) from None


def roll_back_model(
    spark: SparkSession, node, graph, run_vars, table: str,
) -> str:
    """The rollback `dbt run-operation rollback_redeploy` asks for; what was done, to print."""
    config = read_model_config(node, graph, run_vars)
    if config.materialized not in REDEPLOYABLE_MATERIALIZATIONS:
        raise StreamingModelError(
            f"Model {config.model}: it is a {config.materialized}; only streaming_table models "
            f"are redeployed, so there is nothing to roll back."
        )
    claim_lakehouse_for(config.model, table)  # no dbt run or service is writing with this checkpoint
    return roll_back(spark, StreamingWrite(config=config, target_table=table))
