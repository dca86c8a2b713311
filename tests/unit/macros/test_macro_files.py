"""Every macro file parses with dbt's Jinja into the macros dbt looks up, every adapter method a
macro calls is one dbt exposes to Jinja, and every name a macro reads is in the tests' context."""

from __future__ import annotations

import re

import jinja2
import jinja2.meta
from dbt.adapters.spark_streaming.impl import SparkStreamingAdapter
from dbt_common.clients.jinja import get_environment

from macro_rendering import ADAPTER_MACROS, PROJECT_MACROS, SHIPPED_PROJECT_MACROS


def test_the_macros_are_named_as_dbt_looks_them_up(macros):
    ours = {name for name, macro in macros.items() if "global_project" not in macro.path}

    assert {
        "materialization_streaming_table_spark_streaming", "materialization_cdc_table_spark_streaming",
        "materialization_copy_into_spark_streaming", "materialization_unit_spark_streaming",
        "streaming_materialization", "streaming_model_config", "streaming_run_vars",
        "check_streaming_model", "spark_streaming__get_limit_sql", "serve_streaming_queries",
        "reset_checkpoint", "rollback_redeploy", "streaming_model_named", "stream_changes", "stream_appends",
        "source", "ref", "get_fixture_sql", "spark_streaming__generate_schema_name",
    } <= ours


def test_every_adapter_method_a_macro_calls_is_available_to_jinja():
    called = {
        (path.name, method)
        for path in (*ADAPTER_MACROS.rglob("*.sql"), *PROJECT_MACROS.rglob("*.sql"), *SHIPPED_PROJECT_MACROS.rglob("*.sql"))
        for method in re.findall(r"\badapter\.(\w+)\s*\(", path.read_text())
    }

    assert called  # the pattern still finds them
    assert {(file, method) for file, method in called if method not in SparkStreamingAdapter._available_} == set()


def test_every_name_a_macro_reads_is_in_the_rendering_context(renderer):
    """dbt renders with Jinja's lenient Undefined: a name missing from the fake context would be
    silently falsy, and a test could pass for the wrong reason."""
    environment = get_environment()
    context = set(renderer.context())
    missing = {}
    for name, macro in renderer.macros.items():
        tree = environment.parse(macro.macro_sql)
        stored = {node.name for node in tree.find_all(jinja2.nodes.Name) if node.ctx == "store"}
        unknown = jinja2.meta.find_undeclared_variables(tree) - context - stored
        if unknown:
            missing[name] = unknown

    assert missing == {}
