"""The adapter: dbt-spark plus the methods streaming macros call from Jinja."""

from __future__ import annotations

from importlib import import_module
from typing import Any, Iterable, Mapping, Optional, Sequence

from dbt.adapters.base.impl import AdapterTrackingRelationInfo
from dbt.adapters.base.meta import available
from dbt.adapters.spark.impl import SparkAdapter
from dbt.flags import get_flags
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.spark_streaming.__version__ import version
from dbt.adapters.spark_streaming.connections import SparkStreamingConnectionManager, session_for
from python_runners.runtime import checkpoints
from python_runners.runtime import delta_tables
from python_runners.runtime.progress import live as live_progress
from python_runners.runtime import serving
from python_runners.runtime.progress import recorder as stream_progress
from python_runners.runtime import model_query as streaming_queries
from python_runners.runtime.writes.copy_into import CopyInto, copy_source_view, run_copy_into
from python_runners.runtime.event_time import Dedupe, EventTimeConfigError, Watermark
from python_runners.runtime.lakehouse import Lakehouse
from python_runners.runtime.sources.views import StreamSource, StreamSourceConfigError
from python_runners.runtime.catalog import catalog_stats, describe_trigger, table_properties
from python_runners.runtime.model_config import (
    STREAMING_MATERIALIZATIONS,
    StreamingConfigError,
    checked_settings,
)
from python_runners.runtime.errors import StreamingModelError
from python_runners.runtime.writes.streaming import StreamingWrite, run_streaming_write
from python_runners.runtime.triggers import Trigger


class SparkStreamingAdapter(SparkAdapter):
    ConnectionManager = SparkStreamingConnectionManager

    @classmethod
    def type(cls) -> str:
        return "spark_streaming"

    @classmethod
    def get_adapter_run_info(cls, config: Any) -> AdapterTrackingRelationInfo:
        # dbt derives the module from the class name (-> "sparkstreaming"); ours has an underscore.
        return AdapterTrackingRelationInfo(
            adapter_name=cls.type(),
            base_adapter_version=import_module("dbt.adapters.__about__").version,
            adapter_version=version,
            model_adapter_details=cls._get_adapter_specific_run_info(config),
        )

    def _get_columns_for_catalog(self, relation: Any) -> Iterable[dict]:
        """dbt-spark's catalog columns, plus a streaming model's output mode, trigger and checkpoint."""
        columns = list(super()._get_columns_for_catalog(relation))
        if columns and relation.type == "table":
            try:
                stats = catalog_stats(table_properties(self._spark(), relation.render()))
            except Exception:  # not a Delta table, or unreadable: the docs show what dbt-spark found
                stats = {}
            for column in columns:
                column.update(stats)
        return columns

    def set_relations_cache(
        self, relation_configs: Iterable[Any], clear: bool = False, required_schemas: Any = None
    ) -> None:
        """`dbt compile` lists nothing up front (as with --no-populate-cache), so compiling starts
        no Spark session; a macro that asks for a relation still gets it, listed then."""
        if getattr(get_flags(), "WHICH", None) == "compile":
            if clear:
                self.cache.clear()
            return
        super().set_relations_cache(relation_configs, clear, required_schemas)

    def _get_cache_schemas(self, relation_configs: Iterable[Any]) -> set:
        """Schemas whose relations dbt lists before the run (a `show table extended` per schema,
        reading every table's metadata). Streaming materialisations never ask that cache, so a
        schema that only they write is not listed; `get_relation` on it still works uncached."""
        return super()._get_cache_schemas(
            [node for node in relation_configs
             if getattr(getattr(node, "config", None), "materialized", None)
             not in STREAMING_MATERIALIZATIONS]
        )

    def _spark(self):
        return session_for(self.config.credentials)

    @available
    def checkpoint_location(self, configured: Optional[str], schema: str, identifier: str) -> str:
        """Where a model's checkpoint lives: as configured, else <checkpoint root>/<schema>/<model>."""
        lakehouse = Lakehouse.from_env()
        return lakehouse.checkpoint_path(configured or f"{schema}/{identifier}")

    @available
    def streaming_model_settings(
        self, node: Mapping[str, Any], nodes: Mapping[str, Any], run_wide_trigger: Any = None
    ) -> dict:
        """A streaming_table or copy_into model's config checked (at compile time and by the
        materialisation, no Spark needed): its settings, or a Compilation Error naming it."""
        try:
            return checked_settings(node, nodes.values(), run_wide_trigger)
        except StreamingConfigError as error:
            raise CompilationError(str(error)) from None

    @available
    def source_view(
        self, source_name: str, stream_meta: Mapping[str, Any], streaming: bool = True
    ) -> str:
        """The temp view a model reads a meta.stream source through: streaming, or a batch read of
        the same data. Called while the model renders: checks the source's meta and names the view,
        no Spark; the view is registered when SQL naming it runs (create_stream_view, add_query)."""
        try:
            source = StreamSource.from_meta(source_name, stream_meta)
        except StreamSourceConfigError as error:
            raise DbtRuntimeError(str(error)) from None
        return self.connections.source_views.declare(source, streaming)

    @available
    def create_stream_view(
        self, model: str, sql: str, view: str, watermark: Any, output_mode: str
    ) -> None:
        """The model's query as the temp view its stream starts from, each configured watermark on
        the streaming inputs that have its column; resolved and checked, nothing started."""
        if self.empty_run():
            sql = streaming_queries.without_empty_refs(sql)
        self.connections.register_source_views(sql)
        try:
            watermarks = Watermark.list_from_config(model, watermark)
            streaming_queries.create_stream_view(
                self._spark(), model, sql, view, watermarks, output_mode
            )
        except (EventTimeConfigError, StreamingModelError) as error:
            raise DbtRuntimeError(str(error)) from None

    @available
    def empty_run(self) -> bool:
        """`dbt run --empty`: a streaming model checks its query and starts no stream."""
        return bool(getattr(get_flags(), "EMPTY", False))

    @available
    def create_empty_table(
        self,
        source_view: str,
        target_table: str,
        partition_by: Optional[Sequence[str]] = None,
        table_properties: Optional[Mapping[str, str]] = None,
    ) -> bool:
        """`--empty` on a model never built: its table with no rows (as dbt's --empty builds),
        so the models that read it can be checked too; True if it was created. The next run
        streams into it from the start of its input, as into any new table."""
        spark = self._spark()
        return delta_tables.create_if_missing(
            spark, target_table, spark.table(source_view).schema, tuple(partition_by or ()),
            dict(table_properties or {}),
        )

    @available
    def run_streaming_write(
        self,
        model: str,
        source_view: str,
        target_table: str,
        output_mode: str,
        trigger: Mapping[str, Any],
        checkpoint: str,
        partition_by: Optional[Sequence[str]] = None,
        table_properties: Optional[Mapping[str, str]] = None,
        dedupe: Optional[Mapping[str, Any]] = None,
        unique_key: Any = None,
        append_new_columns: bool = False,
        model_trigger: Optional[Mapping[str, Any]] = None,
    ) -> dict:
        try:
            dedupe_config = Dedupe.from_config(model, dedupe)
        except EventTimeConfigError as error:
            raise DbtRuntimeError(str(error)) from None
        write = StreamingWrite(
            model=model,
            source_view=source_view,
            target_table=target_table,
            output_mode=output_mode,
            trigger=Trigger.from_config(trigger),
            checkpoint=checkpoint,
            partition_by=tuple(partition_by or ()),
            table_properties=dict(table_properties or {}),
            dedupe=dedupe_config,
            unique_key=(unique_key,) if isinstance(unique_key, str) else tuple(unique_key or ()),
            append_new_columns=append_new_columns,
            documented={
                "streaming.output_mode": output_mode,
                "streaming.trigger": describe_trigger(
                    Trigger.from_config(trigger), Trigger.from_config(model_trigger or trigger)
                ),
                "streaming.checkpoint": checkpoint,
            },
        )
        try:
            summary = run_streaming_write(self._spark(), write)
        except StreamingModelError as error:
            raise DbtRuntimeError(str(error)) from None
        self._stream_summaries.append(summary)
        return {**summary.__dict__, "message": summary.message()}

    @property
    def _stream_summaries(self) -> list:
        if not hasattr(self, "_summaries_of_this_run"):
            self._summaries_of_this_run = []
        return self._summaries_of_this_run

    @available
    def finish_streaming_run(self) -> None:
        """on-run-end: a summary per streaming model, and this run's batches into the progress table."""
        live_progress.print_summary(self._stream_summaries)
        self._stream_summaries.clear()
        try:
            stream_progress.recorder(self._spark()).flush(self._spark())
        except Exception as error:  # the models' data is in; the run should not fail over this
            print(f"Could not append this run's batches to the progress table: {error}")

    @available
    def copy_source_view(self, model: str, source_name: str) -> str:
        """The temp view a copy_into model's SQL reads its source through (registered per load)."""
        return copy_source_view(model, source_name)

    @available
    def run_copy_into(
        self,
        model: str,
        sql: str,
        source_name: str,
        stream_meta: Mapping[str, Any],
        target_table: str,
        load_log: str,
        force: bool = False,
        append_new_columns: bool = False,
        partition_by: Optional[Sequence[str]] = None,
        table_properties: Optional[Mapping[str, str]] = None,
    ) -> dict:
        try:
            source = StreamSource.from_meta(source_name, stream_meta)
        except StreamSourceConfigError as error:
            raise DbtRuntimeError(str(error)) from None
        copy = CopyInto(
            model=model,
            sql=sql,
            source=source,
            source_view=copy_source_view(model, source_name),
            target_table=target_table,
            load_log=load_log,
            force=bool(force),
            append_new_columns=append_new_columns,
            partition_by=tuple(partition_by or ()),
            table_properties=dict(table_properties or {}),
        )
        try:
            summary = run_copy_into(self._spark(), copy, Lakehouse.from_env())
        except StreamingModelError as error:
            raise DbtRuntimeError(str(error)) from None
        return {**summary.__dict__, "message": summary.message()}

    @available
    def reset_streaming_table(self, target_table: str, checkpoint: str) -> None:
        """Full refresh: the table and its checkpoint (or load log) go together, so it starts over."""
        spark = self._spark()
        delta_tables.drop_if_exists(spark, target_table)
        checkpoints.delete(spark, checkpoint)

    @available
    def serve_streams(self) -> list:
        """Keep processing-time queries running until Ctrl-C/SIGTERM (on-run-end hook)."""
        try:
            return serving.serve_until_stopped(self._spark())
        except StreamingModelError as error:
            raise DbtRuntimeError(str(error)) from None

    @available
    def stop_streams(self) -> list:
        """Stop every running query between batches (on-run-end hook of a failed run)."""
        return serving.stop_all(self._spark())
