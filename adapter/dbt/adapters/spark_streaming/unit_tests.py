"""The adapter's methods for dbt unit tests of streaming models (runtime/unit_tests/model_tests.py):
a mixin, so that dbt still finds them `@available` to Jinja (AdapterMeta collects a base's)."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from dbt.adapters.base.meta import AdapterMeta, available

from dbt.adapters.spark_streaming.errors import reported_to_dbt
import dbt_spark_streaming as runtime


class UnitTestMethods(metaclass=AdapterMeta):
    @available
    @reported_to_dbt
    def unit_test_input_columns(self, relation: str, source_name: Optional[str], name: str, batched: bool) -> dict:
        """A unit test input's column types: its table's, or a streaming source's declared schema;
        `_batch` when its rows say in which micro-batch they arrive (get_fixture_sql override,
        which dbt renders without the graph: the source's meta comes from the manifest)."""
        stream_meta = None
        manifest = self.get_macro_resolver()
        for source in getattr(manifest, "sources", {}).values() if source_name else ():
            if source.source_name == source_name and source.name == name:
                stream_meta = (source.meta or {}).get("stream")
        return runtime.unit_test_input_columns(self._spark(), relation, name, stream_meta, batched)

    @available
    @reported_to_dbt
    def unit_test_actual_rows(
        self, test: Mapping[str, Any], graph: Mapping[str, Any], sql: str, expected_rows: Any,
    ) -> dict:
        """What a unit test compares: the model's SQL over its given rows in one batch, or a
        micro-batch scenario's table after each batch; a temp view and its columns."""
        if not (graph or {}).get("nodes"):  # dbt gives a unit test no graph
            graph = self._flat_graph()
        manifest_test = getattr(self.get_macro_resolver(), "unit_tests", {}).get(test.get("unique_id"))
        given = [fixture.input for fixture in getattr(manifest_test, "given", None) or []]
        return runtime.unit_test_actual_rows(
            self._spark(), test, graph, sql, list(expected_rows or []), given, self.connections.invocation.source_views
        )

    @available
    def drop_unit_test_views(self, test_name: str) -> str:
        runtime.drop_unit_test_views(self._spark(), test_name)
        return ""

    def _flat_graph(self) -> Mapping[str, Any]:
        manifest = self.get_macro_resolver()
        if manifest is None or not hasattr(manifest, "build_flat_graph"):
            return {}
        if not getattr(manifest, "flat_graph", None):
            manifest.build_flat_graph()
        return manifest.flat_graph
