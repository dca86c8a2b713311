"""streaming_table and cdc_table (materializations/streaming_table.sql, cdc_table.sql): both render
streaming_materialization (materializations/streaming_materialization.sql), which reads the model's config, runs its hooks and makes one
adapter call (runtime/run/materialize.py does the rest). Which calls each case makes, with which
arguments and in which order: a normal run, a full refresh (--full-refresh or config
full_refresh), --empty, a config error."""

from __future__ import annotations

import re

import pytest
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from macro_rendering import model_node

# What each needs besides its materialisation to be a valid model.
VALID = {
    "streaming_table": {},
    "cdc_table": {"keys": ["id"], "sequence_by": "lsn", "apply_as_deletes": "op = 'D'"},
}
TABLE = "gold.counts"

CONFIG_READ = ["adapter.streaming_model_config", "run_hooks"]
STREAMED = ["adapter.materialize", "store_raw_result", "persist_docs", "run_hooks"]


@pytest.fixture(params=sorted(VALID))
def streaming(request, renderer):
    renderer.model = model_node(materialized=request.param, **VALID[request.param])
    return renderer


def test_a_run_streams_the_models_query_into_its_table(streaming):
    result = streaming.materialize()

    calls, settings = streaming.calls, streaming.settings()
    assert calls.names() == CONFIG_READ + STREAMED
    assert calls.one("adapter.streaming_model_config").args == (
        streaming.model, streaming.graph, {"stream_trigger": None, "copy_into_force": None})
    assert settings.model == "counts" and settings.materialized == streaming.model["config"]["materialized"]
    assert calls.one("adapter.materialize").args == (
        settings, streaming.sql, TABLE, False, streaming.model, streaming.graph, streaming.selected_resources)
    assert calls.one("store_raw_result").kwargs == {
        "name": "main", "message": "3 rows streamed", "code": "STREAMED", "rows_affected": 3}
    pre, post = calls.of("run_hooks")
    assert pre.args == (streaming.pre_hooks,) and post.args == (streaming.post_hooks,)
    (documented, node) = calls.one("persist_docs").args
    assert documented.render() == TABLE and node is streaming.model
    (relation,) = result["relations"]
    assert (relation.render(), relation.type) == (TABLE, "table")


@pytest.mark.parametrize("flag, configured, refreshes", [
    (True, None, True),  # dbt run --full-refresh
    (False, True, True),  # config full_refresh: true
    (True, False, False),  # config full_refresh: false wins over the flag
    (False, None, False),
])
def test_a_full_refresh_is_asked_of_the_run_as_dbt_resolves_it(streaming, flag, configured, refreshes):
    streaming.flags.FULL_REFRESH = flag
    if configured is not None:
        streaming.model["config"]["full_refresh"] = configured

    streaming.materialize()

    assert streaming.calls.names() == CONFIG_READ + STREAMED
    assert streaming.calls.one("adapter.materialize").args[3] is refreshes


def test_a_refused_run_stores_nothing_and_runs_no_post_hook(streaming):
    streaming.flags.FULL_REFRESH = True

    def refuse(*args):
        raise DbtRuntimeError("Full refresh of counts refused: totals streams from it and would fail.")

    streaming.adapter_answers["materialize"] = refuse

    with pytest.raises(DbtRuntimeError, match="totals streams from it"):
        streaming.materialize()
    assert streaming.calls.names() == CONFIG_READ + ["adapter.materialize"]


def test_empty_stores_what_the_run_said_and_persists_no_docs(streaming):
    streaming.flags.EMPTY = True
    said = "EMPTY run: query checked, no stream started, table created with no rows"
    streaming.adapter_answers["materialize"] = {"code": "EMPTY", "message": said, "rows_affected": 0}

    result = streaming.materialize()

    assert streaming.calls.names() == CONFIG_READ + ["adapter.materialize", "store_raw_result",
                                                      "run_hooks"]
    assert streaming.calls.one("store_raw_result").kwargs == {
        "name": "main", "code": "EMPTY", "rows_affected": 0, "message": said}
    assert [relation.render() for relation in result["relations"]] == [TABLE]


@pytest.mark.parametrize("materialization, config, message", [
    ("streaming_table", {"output_mode": "upsert"},
     "Model counts: output_mode 'upsert' is not supported by streaming_table"),
    ("streaming_table", {"trigerr": {"once": True}},
     "Model counts: config 'trigerr' is not a streaming_table setting; did you mean 'trigger'?"),
    ("cdc_table", {"sequence_by": "lsn"}, "Model counts: cdc_table needs keys"),
])
def test_a_config_error_is_a_compilation_error_before_anything_runs(renderer, materialization, config,
                                                                    message):
    renderer.model = model_node(materialized=materialization, **config)
    renderer.flags.FULL_REFRESH = True

    with pytest.raises(CompilationError, match=re.escape(message)):
        renderer.materialize(materialization)
    assert renderer.calls.names() == ["adapter.streaming_model_config"]  # no hook, drop or stream


def test_the_runs_stream_trigger_var_reaches_the_config(streaming):
    streaming.vars["stream_trigger"] = {"processing_time": "10 seconds"}

    streaming.materialize()

    assert streaming.calls.one("adapter.streaming_model_config").args[2] == {
        "stream_trigger": {"processing_time": "10 seconds"}, "copy_into_force": None}
    assert (streaming.settings().trigger.kind, streaming.settings().trigger.interval) == (
        "processing_time", "10 seconds")


def test_a_wrong_stream_trigger_var_is_a_config_error(streaming):
    streaming.vars["stream_trigger"] = "sometimes"

    with pytest.raises(CompilationError, match=re.escape("trigger 'sometimes' is not valid")):
        streaming.materialize()
    assert streaming.calls.names() == ["adapter.streaming_model_config"]
