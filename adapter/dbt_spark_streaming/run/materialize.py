"""dbt's streaming materialisations, one call (`materialize`): from the model's checked config to
the line dbt prints. The materialisation macros run the model's hooks, make this one call, and
store its result.

A streaming_table or cdc_table model (`materialize_streaming_model`):
1. `--empty`: its query resolved against its inputs and no stream started; a model never built
   gets its table with no rows, so the models that read it can be checked too;
2. its inputs remembered from the last run have nothing new: its SQL is left unresolved
   (lifecycle/query_inputs.py), and resolved later only if the run needs it after all;
3. else a pending checkpoint reset sets where its reads start (lifecycle/reset/checkpoint_reset.py),
   and its query is resolved and checked into the view its stream starts from, the json/csv
   lines it cannot read kept out of it for their quarantine (sources/corrupt_lines.py);
4. a full refresh, once the query resolved, so that a broken query drops nothing: its table,
   the tables kept beside it and its checkpoint (lifecycle/full_refresh.py);
5. its run (run/model_run.py), then its backfills (writes/backfill.py).

A copy_into model (`materialize_copy_into`): its full refresh, then the load (writes/copy_into.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from pyspark.sql import SparkSession

from dbt_spark_streaming.config.contracts import with_not_null
from dbt_spark_streaming.config.materializations import streams
from dbt_spark_streaming.config.model import ModelConfig
from dbt_spark_streaming.delta import constraints as delta_constraints
from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.session import claim_model_if_attached
from dbt_spark_streaming.lifecycle import full_refresh, query_inputs
from dbt_spark_streaming.lifecycle.reset import checkpoint_reset
from dbt_spark_streaming.run.invocation import Invocation
from dbt_spark_streaming.run.model_run import run_streaming_model
from dbt_spark_streaming.sources.corrupt_lines import CorruptLines, keep_out_of_model
from dbt_spark_streaming.writes import backfill, copy_into, model_query
from dbt_spark_streaming.writes.cdc.change_rows import FeedShape
from dbt_spark_streaming.writes.streaming import StreamingWrite

EMPTY = "EMPTY"


# `--full-refresh` of a model (or its full_refresh config), with what dbt knows around it: its
# node, dbt's graph and the run's selected unique ids (a model streaming from it must not be
# left to fail: lifecycle/full_refresh.py).
Refresh = tuple[Mapping[str, Any], Mapping[str, Any], Iterable[str]]


@dataclass(frozen=True)
class Materialized:
    """What dbt stores as the model's result: the run line and run_results.json."""

    code: str
    message: str
    rows_affected: int

    def for_dbt(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "rows_affected": self.rows_affected}


def materialize(
    spark: SparkSession, invocation: Invocation, config: ModelConfig, sql: str, target_table: str,
    full_refresh_of: Optional[Refresh] = None, empty: bool = False,
) -> Materialized:
    """The model's run as its materialisation makes it: a streaming query, or a load."""
    claim_model_if_attached(config.model)
    if streams(config.materialized):
        return materialize_streaming_model(spark, invocation, config, sql, target_table, full_refresh_of, empty)
    return materialize_copy_into(spark, config, sql, target_table, full_refresh_of, empty)


def materialize_streaming_model(
    spark: SparkSession, invocation: Invocation, config: ModelConfig, sql: str, target_table: str,
    full_refresh_of: Optional[Refresh] = None, empty: bool = False,
) -> Materialized:
    view = f"{config.model}__stream_src"
    if empty:
        return _empty_run(spark, invocation, config, model_query.without_empty_refs(sql), view, target_table)
    key = "" if full_refresh_of else query_inputs.key_of(sql, invocation.source_views, config)
    idle = (key and config.trigger.runs_until_caught_up  # a served query starts from the view
            and query_inputs.up_to_date_before_resolving(spark, config.checkpoint, key, sql))
    corrupt_lines: tuple[CorruptLines, ...] = ()
    if not idle:
        reads = sql if full_refresh_of else checkpoint_reset.apply_to_query(
            spark, config, sql, invocation.source_views, Lakehouse.from_env())
        if reads != sql:
            key = ""  # a reset's reads are this run's only: its inputs are not remembered
        corrupt_lines = _resolve(spark, invocation, config, reads, view)
    if full_refresh_of:
        _full_refresh(spark, config, target_table, full_refresh_of)
    write = StreamingWrite(config=config, target_table=target_table, source_view=view, inputs_key=key)
    summary = run_streaming_model(
        spark, invocation.run, write, corrupt_lines, known_up_to_date=idle or None,
        # left unresolved while up to date: resolved only if the run needs the view after all
        resolve_view=(lambda: _resolve(spark, invocation, config, sql, view)) if idle else (lambda: None),
    )
    invocation.run.summaries.append(summary)
    backfilled = backfill.backfills_said(backfill.run_backfills(spark, config, sql, target_table))
    return Materialized(summary.code, summary.message() + backfilled, summary.input_rows)


def materialize_copy_into(
    spark: SparkSession, config: ModelConfig, sql: str, target_table: str,
    full_refresh_of: Optional[Refresh] = None, empty: bool = False,
) -> Materialized:
    if empty:  # loading no rows would still mark the files loaded
        return Materialized(EMPTY, "EMPTY run: no files loaded (table and load log untouched)", 0)
    if full_refresh_of:
        _full_refresh(spark, config, target_table, full_refresh_of)
    copy = copy_into.CopyInto(config=config, target_table=target_table, sql=sql)
    summary = copy_into.run_copy_into(spark, copy, Lakehouse.from_env())
    return Materialized("COPIED", summary.message(), summary.rows_loaded)


def _resolve(spark: SparkSession, invocation: Invocation, config: ModelConfig, sql: str,
             view: str) -> tuple[CorruptLines, ...]:
    """The model's query as the temp view its stream starts from; the json/csv sources whose
    unreadable lines it does not see (it reads only their readable lines)."""
    invocation.source_views.register_named_in(lambda: spark, sql)
    sql, corrupt_lines = keep_out_of_model(spark, config, sql, invocation.source_views)
    model_query.create_stream_view(spark, config, sql, view, invocation.source_views.corrupt_record_columns())
    return corrupt_lines


def _empty_run(spark: SparkSession, invocation: Invocation, config: ModelConfig, sql: str, view: str,
               target_table: str) -> Materialized:
    _resolve(spark, invocation, config, sql, view)
    schema = spark.table(view).schema
    if config.changes is not None:
        schema = FeedShape(config.changes, schema).table_schema()
    created = delta_tables.create_if_missing(
        spark, target_table, with_not_null(schema, config.contract), config.partition_by, dict(config.tblproperties),
    )
    if created:  # --empty leaves an existing table as it is
        delta_constraints.add_missing(spark, target_table, config.contract)
    untouched = "table created with no rows" if created else "table and checkpoint untouched"
    return Materialized(EMPTY, f"EMPTY run: query checked, no stream started, {untouched}", 0)


def _full_refresh(spark: SparkSession, config: ModelConfig, target_table: str, refresh: Refresh) -> None:
    node, graph, selected = refresh
    plan = full_refresh.plan(node, (graph or {}).get("nodes", {}), selected or ())
    full_refresh.reset(spark, target_table, config.checkpoint, config.companion_tables(target_table),
                       in_place=plan.in_place)
