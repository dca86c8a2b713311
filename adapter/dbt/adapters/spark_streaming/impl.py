"""The adapter: dbt-spark plus the methods streaming macros call from Jinja."""

from __future__ import annotations

from importlib import import_module
from typing import Any, Iterable, Mapping, Optional

from dbt.adapters.base.impl import AdapterTrackingRelationInfo, ConstraintSupport
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.contracts.connection import Connection
from dbt.adapters.contracts.relation import RelationConfig
from dbt.adapters.base.meta import available
from dbt.adapters.events.types import AdapterEventWarning
from dbt.adapters.spark.impl import SparkAdapter
from dbt.flags import get_flags
from dbt_common.contracts.constraints import ConstraintType
from dbt_common.exceptions import CompilationError
from dbt_common.events.contextvars import get_node_info
from dbt_common.events.functions import warn_or_error

from dbt.adapters.spark_streaming.__version__ import version
from dbt.adapters.spark_streaming.connections import SparkStreamingConnectionManager, session_for
from dbt.adapters.spark_streaming.errors import reported_to_dbt
from dbt.adapters.spark_streaming.relation import ASKED_FOR, SparkStreamingRelation, errors_if_none_can_run
from dbt.adapters.spark_streaming.unit_tests import UnitTestMethods
import dbt_spark_streaming as runtime


class SparkStreamingAdapter(UnitTestMethods, SparkAdapter):
    ConnectionManager = SparkStreamingConnectionManager
    Relation = SparkStreamingRelation
    # Delta checks NOT NULL and CHECK constraints on every write (the streaming materialisations
    # add them: runtime/delta/constraints.py); keys and uniqueness it does not know, so they are
    # ignored with a warning. dbt-spark says NOT_ENFORCED for all, as it also writes plain files.
    CONSTRAINT_SUPPORT = {
        ConstraintType.check: ConstraintSupport.ENFORCED,
        ConstraintType.not_null: ConstraintSupport.ENFORCED,
        ConstraintType.unique: ConstraintSupport.NOT_SUPPORTED,
        ConstraintType.primary_key: ConstraintSupport.NOT_SUPPORTED,
        ConstraintType.foreign_key: ConstraintSupport.NOT_SUPPORTED,
    }

    @classmethod
    def type(cls) -> str:
        return "spark_streaming"

    @classmethod
    def get_adapter_run_info(cls, config: RelationConfig) -> AdapterTrackingRelationInfo:
        # dbt derives the module from the class name (-> "sparkstreaming"); ours has an underscore.
        return AdapterTrackingRelationInfo(
            adapter_name=cls.type(),
            base_adapter_version=import_module("dbt.adapters.__about__").version,
            adapter_version=version,
            model_adapter_details=cls._get_adapter_specific_run_info(config),
        )

    def _get_columns_for_catalog(self, relation: BaseRelation) -> Iterable[dict]:
        """dbt-spark's catalog columns, plus a streaming model's output mode, trigger and checkpoint."""
        columns = list(super()._get_columns_for_catalog(relation))
        if columns and relation.type == "table":
            try:
                stats = runtime.catalog_stats(runtime.table_properties(self._spark(), relation.render()))
            except Exception:  # not a Delta table, or unreadable: the docs show what dbt-spark found
                stats = {}
            for column in columns:
                column.update(stats)
        return columns

    def acquire_connection(self, name: Optional[str] = None) -> Connection:
        # A run's "master" connection opens before it asks for the selected models' relations:
        # those it asked for earlier (while parsing, every node's) are not the run's.
        if name == "master":
            ASKED_FOR.take()
        return super().acquire_connection(name)

    def list_schemas(self, database: Optional[str]) -> list:
        """A run's first SQL (its schemas, before any model): refused first when every model
        it was asked for stops on its own config (relation.py)."""
        self._refuse_a_run_no_model_of_which_can_run()
        return super().list_schemas(database)

    def _refuse_a_run_no_model_of_which_can_run(self) -> None:
        asked_for = ASKED_FOR.take()
        manifest = self.get_macro_resolver()
        if not asked_for or manifest is None or getattr(get_flags(), "WHICH", None) not in ("run", "build"):
            return
        run_vars = {key: value for key, value in (getattr(get_flags(), "VARS", None) or {}).items()
                    if key in ("stream_trigger", "copy_into_force")}
        graph = getattr(manifest, "flat_graph", None) or {}
        errors = errors_if_none_can_run(
            asked_for, graph, lambda node: runtime.config_error_of(node, graph, run_vars))
        if errors:  # dbt's own words for the first model's, the others' after it
            first = manifest.nodes.get(errors[0][0])
            others = "".join(f"\n{unique_id.split('.')[-1]}: {error}" for unique_id, error in errors[1:])
            raise CompilationError(
                f"{errors[0][1]}{others}\nNothing was run: every model selected stops on its config, "
                "so the run stopped before waiting for Spark.", node=first)

    def set_relations_cache(
        self, relation_configs: Iterable[RelationConfig], clear: bool = False,
        required_schemas: Optional[set[BaseRelation]] = None,
    ) -> None:
        """`dbt compile` lists nothing up front (as with --no-populate-cache), so compiling starts
        no Spark session; a macro that asks for a relation still gets it, listed then."""
        if getattr(get_flags(), "WHICH", None) == "compile":
            if clear:
                self.cache.clear()
            return
        super().set_relations_cache(relation_configs, clear, required_schemas)

    def _get_cache_schemas(self, relation_configs: Iterable[RelationConfig]) -> set:
        """Schemas whose relations dbt lists before the run (a `show table extended` per schema,
        reading every table's metadata). Streaming materialisations never ask that cache, so a
        schema that only they write is not listed; `get_relation` on it still works uncached."""
        return super()._get_cache_schemas(
            [node for node in relation_configs
             if getattr(getattr(node, "config", None), "materialized", None)
             not in runtime.STREAMING_MATERIALIZATIONS]
        )

    def _spark(self):
        return session_for(self.config.credentials)

    @available
    def streaming_materializations(self, having: Optional[str] = None) -> list:
        """The project's materialisations (runtime/config/materializations.py), or those with a
        property: 'streams', 'can_be_reset', 'can_be_redeployed'."""
        return [name for name, kind in runtime.MATERIALIZATIONS.items()
                if having is None or getattr(kind, having)]

    @available
    @reported_to_dbt
    def streaming_model_config(
        self, node: Mapping[str, Any], graph: Mapping[str, Any], run_vars: Mapping[str, Any]
    ) -> runtime.ModelConfig:
        """A streaming_table or copy_into model's config, read and checked whole (at compile
        time and first thing in the materialisation, no Spark): a Compilation Error naming the
        model and the setting, or the one object every later step takes its settings from."""
        return runtime.read_model_config(node, graph, run_vars)

    @available
    def stream_source_meta(
        self, graph: Mapping[str, Any], source_name: str, table_name: str
    ) -> Optional[Mapping[str, Any]]:
        """A source's meta.stream (the project's source() override asks); None for a plain source."""
        return runtime.source_stream_meta(graph, source_name, table_name)

    @available
    @reported_to_dbt
    def source_view(
        self, source_name: str, stream_meta: Mapping[str, Any], streaming: bool = True
    ) -> str:
        """The temp view a model reads a meta.stream source through: streaming, or a batch read of
        the same data. Called while the model renders: checks the source's meta and names the view,
        no Spark; the view is registered when SQL naming it runs (create_stream_view, add_query)."""
        source = runtime.StreamSource.from_meta(source_name, stream_meta)
        return self.connections.source_views.declare(source, streaming)

    @available
    @reported_to_dbt
    def create_stream_view(
        self, config: runtime.ModelConfig, sql: str, view: str, full_refresh: bool = False
    ) -> tuple:
        """The model's query as the temp view its stream starts from, each configured watermark on
        the streaming inputs that have its column; resolved and checked, nothing started. A
        pending checkpoint reset (not on a full refresh, which deletes it) sets where its
        streaming reads start. Returns the json/csv sources whose unreadable lines the model does
        not see (it reads only their readable lines), for run_streaming_model to quarantine. A
        model whose remembered inputs have nothing new is left unresolved unless its run needs it."""
        self._warn_of_ignored_constraints(config)
        if self.empty_run():
            return self._resolve_stream_view(config, runtime.without_empty_refs(sql), view)
        key = "" if full_refresh else runtime.query_inputs_key(sql, self.connections.source_views, config)
        idle = (key and config.trigger.runs_until_caught_up  # a served query starts from the view
                and runtime.up_to_date_before_resolving(self._spark(), config.checkpoint, key, sql))
        if idle:  # nothing new: resolved only if the run needs the view after all
            self.connections.stream_views[view] = (key, idle, lambda: self._resolve_stream_view(config, sql, view))
            return ()
        reset = sql if full_refresh else runtime.apply_checkpoint_reset(
            self._spark(), config, sql, self.connections.source_views, runtime.Lakehouse.from_env()
        )
        # a reset's reads are this run's only: its inputs are not remembered
        self.connections.stream_views[view] = (key if reset == sql else "", None, None)
        return self._resolve_stream_view(config, reset, view)

    def _resolve_stream_view(self, config: runtime.ModelConfig, sql: str, view: str) -> tuple:
        self.connections.register_source_views(sql)
        sql, corrupt_lines = runtime.keep_corrupt_lines_out(
            self._spark(), config, sql, self.connections.source_views
        )
        runtime.create_stream_view(self._spark(), config, sql, view,
                                   self.connections.source_views.corrupt_record_columns())
        return corrupt_lines

    @staticmethod
    def _warn_of_ignored_constraints(config: runtime.ModelConfig) -> None:
        """A contract's constraints Delta does not enforce, said once per run of the model
        (an error with --warn-error, as dbt's own constraint warnings)."""
        for warning in config.contract.warnings if config.contract is not None else ():
            warn_or_error(AdapterEventWarning(
                name="spark_streaming", base_msg=warning, args=[], node_info=get_node_info()
            ))

    @available
    def empty_run(self) -> bool:
        """`dbt run --empty`: a streaming model checks its query and starts no stream."""
        return bool(getattr(get_flags(), "EMPTY", False))

    @available
    @reported_to_dbt
    def create_empty_table(self, config: runtime.ModelConfig, source_view: str, target_table: str) -> bool:
        """`--empty` on a model never built: its table with no rows (as dbt's --empty builds),
        so the models that read it can be checked too; True if it was created. The next run
        streams into it from the start of its input, as into any new table."""
        spark = self._spark()
        schema = spark.table(source_view).schema
        if config.changes is not None:
            schema = runtime.FeedShape(config.changes, schema).table_schema()
        created = runtime.create_table_if_missing(
            spark, target_table, runtime.with_not_null(schema, config.contract), config.partition_by,
            dict(config.tblproperties),
        )
        if created:  # --empty leaves an existing table as it is
            runtime.add_missing_constraints(spark, target_table, config.contract)
        return created

    @available
    @reported_to_dbt
    def run_streaming_write(
        self, config: runtime.ModelConfig, source_view: str, target_table: str, corrupt_lines: Any = None
    ) -> dict:
        """`corrupt_lines`: what create_stream_view returned (their quarantine runs with the model)."""
        key, idle, resolve = self.connections.stream_views.pop(source_view, ("", None, None))
        write = runtime.StreamingWrite(config=config, target_table=target_table, source_view=source_view,
                                       inputs_key=key)
        summary = runtime.run_streaming_model(
            self._spark(), self.connections.streaming_run, write, tuple(corrupt_lines or ()),
            known_up_to_date=idle, resolve_view=resolve or (lambda: None),
        )
        self._stream_summaries.append(summary)
        return {**summary.__dict__, "message": summary.message(), "code": summary.code}

    @available
    @reported_to_dbt
    def run_backfills(self, config: runtime.ModelConfig, sql: str, target_table: str) -> str:
        """A streaming_table's backfills: historical data run through its SQL and appended once,
        its checkpoint untouched (runtime/writes/backfill.py); what the run output adds."""
        return runtime.backfills_said(runtime.run_backfills(self._spark(), config, sql, target_table))

    @property
    def _stream_summaries(self) -> list:
        return self.connections.streaming_run.summaries

    @available
    def finish_streaming_run(self) -> None:
        """on-run-end: a summary per streaming model, and this run's batches into the progress table."""
        self.connections.streaming_run.finish(self._spark())

    @available
    def copy_source_view(self, model: str, source_name: str) -> str:
        """The temp view a copy_into model's SQL reads its source through (registered per load)."""
        return runtime.copy_source_view(model, source_name)

    @available
    @reported_to_dbt
    def run_copy_into(self, config: runtime.ModelConfig, sql: str, target_table: str) -> dict:
        self._warn_of_ignored_constraints(config)
        copy = runtime.CopyInto(config=config, target_table=target_table, sql=sql)
        summary = runtime.run_copy_into(self._spark(), copy, runtime.Lakehouse.from_env())
        return {**summary.__dict__, "message": summary.message()}

    @available
    @reported_to_dbt
    def plan_full_refresh(self, model: Mapping[str, Any], graph: Mapping[str, Any], selected: Iterable[str]) -> bool:
        """Before a full refresh drops anything: refused while a model streaming from this one
        would be left to fail; True when the table is to be emptied in place for readers that
        follow rewrites (runtime/lifecycle/full_refresh.py)."""
        return runtime.plan_full_refresh(model, graph.get("nodes", {}), selected or ()).in_place

    @available
    @reported_to_dbt
    def reset_streaming_table(
        self, target_table: str, checkpoint: str, companion_tables: Iterable[str] = (),
        in_place: bool = False,
    ) -> None:
        """Full refresh: the table, the tables kept beside it and its checkpoint (or load log)
        go together, so it starts over. `in_place`: the table is emptied, not dropped, so the
        readers that continue over it keep streaming from the same Delta table."""
        spark = self._spark()
        if in_place and spark.catalog.tableExists(target_table):
            runtime.empty_table(spark, target_table)
        else:
            runtime.drop_table_if_exists(spark, target_table)
        for table in companion_tables:
            runtime.drop_table_if_exists(spark, table)
        runtime.delete_checkpoint(spark, checkpoint)
        # The unreadable lines of the json/csv sources it reads, if it kept any, and the
        # checkpoints of their queries (runtime/sources/corrupt_lines.py)
        runtime.drop_table_if_exists(spark, runtime.corrupt_lines_table(target_table))
        runtime.delete_checkpoint(spark, runtime.corrupt_lines_checkpoint(checkpoint))
        runtime.forget_redeploy(spark, target_table, checkpoint, companion_tables)

    @available
    @reported_to_dbt
    def reset_checkpoint(
        self, node: Mapping[str, Any], graph: Mapping[str, Any], run_vars: Mapping[str, Any],
        arguments: Mapping[str, Any], target_table: str,
    ) -> str:
        """run-operation reset_checkpoint: the model's checkpoint deleted, its table kept, and
        where its next run starts reading recorded in the checkpoint's folder; what was done."""
        return runtime.reset_model_checkpoint(
            self._spark(), node, graph, run_vars, arguments, target_table, runtime.Lakehouse.from_env()
        )

    @available
    @reported_to_dbt
    def rollback_redeploy(
        self, node: Mapping[str, Any], graph: Mapping[str, Any], run_vars: Mapping[str, Any], target_table: str,
    ) -> str:
        """run-operation rollback_redeploy: the model's table and checkpoint as before its last
        redeploy (runtime/lifecycle/redeploy.py); what was done."""
        return runtime.roll_back_model(self._spark(), node, graph, run_vars, target_table)

    @available
    @reported_to_dbt
    def serve_streams(self) -> list:
        """Keep processing-time queries running until Ctrl-C/SIGTERM (on-run-end hook)."""
        return runtime.serve_until_stopped(self._spark(), self.connections.streaming_run)

    def cleanup_connections(self) -> None:
        """dbt's end of every command, after its on-run-end hooks. A project without the hook
        serve_streaming_queries() still gets the run's summary and its batches in the progress
        table (after the hook there is nothing left to do), and is told how to serve its
        processing-time queries."""
        spark = runtime.active_session()
        if spark is not None:
            self.connections.streaming_run.finish(spark)
            runtime.say_unserved(spark, self.connections.streaming_run)
        super().cleanup_connections()

    @available
    def stop_streams(self) -> list:
        """Stop every running query between batches (on-run-end hook of a failed run)."""
        return runtime.stop_all_streams(self._spark())

