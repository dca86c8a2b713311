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
            stats = runtime.catalog_stats_of(self._spark(), relation.render())
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
        no Spark; the view is registered when SQL naming it runs (the model's run, add_query)."""
        return self.connections.invocation.source_views.declare_from_meta(source_name, stream_meta, streaming)

    @available
    @reported_to_dbt
    def materialize(
        self, config: runtime.ModelConfig, sql: str, target_table: str, full_refresh: bool,
        node: Mapping[str, Any], graph: Mapping[str, Any], selected: Iterable[str],
    ) -> dict:
        """A streaming_table, cdc_table or copy_into model's run, from its checked config to what
        dbt stores as its result (runtime/run/materialize.py)."""
        self._warn_of_ignored_constraints(config)
        return runtime.materialize(
            self._spark(), self.connections.invocation, config, sql, target_table,
            full_refresh_of=(node, graph, selected) if full_refresh else None, empty=self._empty_run(),
        ).for_dbt()

    @staticmethod
    def _warn_of_ignored_constraints(config: runtime.ModelConfig) -> None:
        """A contract's constraints Delta does not enforce, said once per run of the model
        (an error with --warn-error, as dbt's own constraint warnings)."""
        for warning in config.contract.warnings if config.contract is not None else ():
            warn_or_error(AdapterEventWarning(
                name="spark_streaming", base_msg=warning, args=[], node_info=get_node_info()
            ))

    @staticmethod
    def _empty_run() -> bool:
        """`dbt run --empty`: a streaming model checks its query and starts no stream."""
        return bool(getattr(get_flags(), "EMPTY", False))

    @available
    def finish_streaming_run(self) -> None:
        """on-run-end: a summary per streaming model, and this run's batches into the progress table."""
        self.connections.invocation.run.finish(self._spark())

    @available
    def copy_source_view(self, model: str, source_name: str) -> str:
        """The temp view a copy_into model's SQL reads its source through (registered per load)."""
        return runtime.copy_source_view(model, source_name)

    @available
    @reported_to_dbt
    def reset_checkpoint(
        self, node: Mapping[str, Any], graph: Mapping[str, Any], run_vars: Mapping[str, Any],
        arguments: Mapping[str, Any], target_table: str,
    ) -> str:
        """run-operation reset_checkpoint: the model's checkpoint deleted, its table kept, and
        where its next run starts reading recorded in the checkpoint's folder; what was done."""
        return runtime.reset_model_checkpoint(self._spark(), node, graph, run_vars, arguments, target_table)

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
    def maintain_tables(
        self, models: list, graph: Mapping[str, Any], run_vars: Mapping[str, Any],
        progress_table: bool = False,
    ) -> str:
        """run-operation maintain_tables: each (node, table) compacted and vacuumed, with the
        guards for rollbacks and unread files (runtime/lifecycle/maintenance.py), and the
        progress table with `progress_table`; what was done."""
        return runtime.maintain_models(self._spark(), models, graph, run_vars, progress_table)

    @available
    @reported_to_dbt
    def serve_streams(self) -> list:
        """Keep processing-time queries running until Ctrl-C/SIGTERM (on-run-end hook)."""
        return runtime.serve_until_stopped(self._spark(), self.connections.invocation.run)

    def cleanup_connections(self) -> None:
        """dbt's end of every command, after its on-run-end hooks (runtime/run/invocation.py)."""
        self.connections.invocation.end()
        super().cleanup_connections()

    @available
    def stop_streams(self) -> list:
        """Stop every running query between batches (on-run-end hook of a failed run)."""
        return runtime.stop_all_streams(self._spark())

