"""The root project's overrides (adapter/dbt_spark_streaming/project_macros/source.sql, ref.sql, and the adapter's spark_streaming__generate_schema_name)
and the compile-time config check they run (check_streaming_model, streaming_model_config.sql)."""

from __future__ import annotations

import re

import pytest
from dbt_common.exceptions import CompilationError

from macro_rendering import EVENTS, model_node, source_node

VALID = {
    "streaming_table": {},
    "cdc_table": {"keys": ["id"], "sequence_by": "lsn"},
    "copy_into": {},
}
CHECKED = "adapter.streaming_model_config"


# --- source() ---------------------------------------------------------------------------------

@pytest.mark.parametrize("materialized, streaming", [
    ("streaming_table", True), ("cdc_table", True), ("table", False), ("view", False), ("incremental", False),
])
def test_a_stream_source_is_read_through_its_view_named_by_the_adapter(renderer, materialized, streaming):
    renderer.model = model_node(materialized=materialized, **VALID.get(materialized, {}))

    relation = renderer.call("source", "landing", "events")

    calls = renderer.calls
    assert (relation.render(), relation.type) == ("landing__events__view", "view")
    assert calls.one("builtins.source").args == ("landing", "events")  # dbt's lineage kept
    assert calls.one("adapter.stream_source_meta").args == (renderer.graph, "landing", "events")
    # a stream for the streaming materialisations, a batch read of the same data for the others
    assert calls.one("adapter.source_view").args == ("landing.events", EVENTS, streaming)
    assert "adapter.copy_source_view" not in calls.names()
    # a streaming model's config is checked as it compiles, before its view is named
    checks = ["builtins.source", CHECKED] if streaming else ["builtins.source"]
    assert calls.names() == [*checks, "adapter.stream_source_meta", "adapter.source_view"]


def test_a_copy_into_model_reads_its_source_through_the_view_of_each_load(renderer):
    renderer.model = model_node("loads", "copy_into", schema="bronze")

    relation = renderer.call("source", "landing", "events")

    assert (relation.render(), relation.type) == ("copy_into__loads__landing__events", "view")
    assert renderer.calls.one("adapter.copy_source_view").args == ("loads", "landing.events")
    assert "adapter.source_view" not in renderer.calls.names()
    assert renderer.calls.names()[:2] == ["builtins.source", CHECKED]


@pytest.mark.parametrize("materialized", ["streaming_table", "copy_into", "table"])
def test_a_plain_source_is_dbts_own(renderer, materialized):
    renderer.model = model_node(materialized=materialized, sources=[("landing", "events")],
                                **VALID.get(materialized, {}))
    renderer.sources.append(source_node("erp", "customers"))

    relation = renderer.call("source", "erp", "customers")

    assert relation is renderer.calls.one("builtins.source").result
    assert relation.render() == "erp.customers"
    assert not {"adapter.source_view", "adapter.copy_source_view"} & set(renderer.calls.names())


def test_while_dbt_parses_a_source_is_dbts_own_and_nothing_is_checked(renderer):
    renderer.execute = False

    relation = renderer.call("source", "landing", "events")

    assert relation is renderer.calls.one("builtins.source").result
    assert renderer.calls.names() == ["builtins.source"]


def test_a_unit_tests_source_is_its_given_rows(renderer):
    renderer.model = {"name": "test_counts", "resource_type": "unit_test", "config": {}}

    relation = renderer.call("source", "landing", "events")

    assert relation is renderer.calls.one("builtins.source").result
    assert renderer.calls.names() == ["builtins.source"]


def test_a_data_test_reads_a_stream_source_as_a_batch_and_checks_no_streaming_config(renderer):
    renderer.model = model_node("not_null_events_id", "test", resource_type="test")

    renderer.call("source", "landing", "events")

    assert renderer.calls.one("adapter.source_view").args == ("landing.events", EVENTS, False)
    assert CHECKED not in renderer.calls.names()


@pytest.mark.parametrize("macro, args", [("source", ("landing", "events")), ("ref", ("upstream",))])
def test_a_misconfigured_streaming_model_fails_as_it_compiles(renderer, macro, args):
    renderer.model = model_node(output_mode="upsert")

    with pytest.raises(CompilationError, match=re.escape("Model counts: output_mode 'upsert'")):
        renderer.call(macro, *args)
    assert "adapter.source_view" not in renderer.calls.names()


# --- ref() ------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, kwargs", [
    (("upstream",), {}),
    (("other_package", "upstream"), {}),
    (("upstream",), {"version": 2}),
    (("upstream",), {"v": "2"}),
])
def test_ref_is_dbts_own_with_every_argument_passed_on(renderer, args, kwargs):
    relation = renderer.call("ref", *args, **kwargs)

    call = renderer.calls.one("builtins.ref")
    assert (call.args, call.kwargs) == (args, kwargs)
    assert relation is call.result and relation.render() == "gold.upstream"


@pytest.mark.parametrize("materialized, checked", [
    ("streaming_table", True), ("cdc_table", True), ("copy_into", True), ("table", False), ("view", False),
])
def test_ref_checks_the_streaming_config_of_the_model_compiling(renderer, materialized, checked):
    renderer.model = model_node(materialized=materialized, **VALID.get(materialized, {}))

    renderer.call("ref", "upstream")

    if checked:
        assert renderer.calls.names() == ["builtins.ref", CHECKED]
        assert renderer.calls.one(CHECKED).args == (
            renderer.model, renderer.graph, {"stream_trigger": None, "copy_into_force": None})
    else:
        assert renderer.calls.names() == ["builtins.ref"]


@pytest.mark.parametrize("model", [
    None,  # dbt's parse-time or operation context
    model_node(resource_type="snapshot"),
    model_node(resource_type="seed"),
])
def test_only_models_have_their_streaming_config_checked(renderer, model):
    renderer.model = model

    renderer.call("ref", "upstream")

    assert renderer.calls.names() == ["builtins.ref"]


def test_while_dbt_parses_a_ref_checks_nothing(renderer):
    renderer.execute = False
    renderer.model = model_node(output_mode="upsert")  # would fail the check

    renderer.call("ref", "upstream")

    assert renderer.calls.names() == ["builtins.ref"]


# --- generate_schema_name ---------------------------------------------------------------------

@pytest.mark.parametrize("target, production_targets, custom, schema", [
    ("dev", None, None, "analytics"),  # no custom schema: the target's own
    ("dev", None, "silver", "analytics_silver"),  # a sandbox: dbt's <target schema>_<custom>
    ("dev", None, " gold ", "analytics_gold"),
    ("prod", None, "silver", "silver"),  # production (by default 'prod'): the layer's own name
    ("prod", None, None, "analytics"),
    ("local", ["local", "cluster"], "silver", "silver"),  # production as the project names it
    ("prod", ["local", "cluster"], "silver", "analytics_silver"),
])
def test_a_layer_is_its_schema_in_production_and_prefixed_elsewhere(renderer, target, production_targets,
                                                                    custom, schema):
    renderer.target.name = target
    if production_targets is not None:
        renderer.vars["production_targets"] = production_targets
    rendered = renderer.call("spark_streaming__generate_schema_name", custom, model_node())
    assert rendered.strip() == schema