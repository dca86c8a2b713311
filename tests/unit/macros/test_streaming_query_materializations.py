"""streaming_table and cdc_table (materializations/streaming_table.sql, cdc_table.sql): both render
streaming_query_materialization. Which adapter calls each branch makes, with which arguments and
in which order: a normal run, a full refresh (--full-refresh or config full_refresh), --empty, a
config error, backfills."""

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
VIEW = "counts__stream_src"
TABLE = "gold.counts"

CONFIG_READ = ["adapter.streaming_model_config", "run_hooks", "adapter.create_stream_view", "adapter.empty_run"]
STREAMED = ["adapter.run_streaming_write", "store_raw_result", "persist_docs", "run_hooks"]
FULL_REFRESH = ["adapter.plan_full_refresh", "adapter.reset_streaming_table"]


@pytest.fixture(params=sorted(VALID))
def streaming(request, renderer):
    renderer.model = model_node(materialized=request.param, **VALID[request.param])
    return renderer


def test_a_run_streams_the_models_query_into_its_table(streaming):
    streaming.adapter_answers["create_stream_view"] = ("landing.events",)  # its corrupt lines

    result = streaming.materialize()

    calls, settings = streaming.calls, streaming.settings()
    assert calls.names() == CONFIG_READ + STREAMED
    assert calls.one("adapter.streaming_model_config").args == (
        streaming.model, streaming.graph, {"stream_trigger": None, "copy_into_force": None})
    assert settings.model == "counts" and settings.materialized == streaming.model["config"]["materialized"]
    assert calls.one("adapter.create_stream_view").args == (settings, streaming.sql, VIEW, False)
    assert calls.one("adapter.run_streaming_write").args == (settings, VIEW, TABLE, ("landing.events",))
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
@pytest.mark.parametrize("in_place", [False, True])
def test_a_full_refresh_resets_table_and_checkpoint_before_the_write(streaming, flag, configured, refreshes,
                                                                     in_place):
    streaming.flags.FULL_REFRESH = flag
    if configured is not None:
        streaming.model["config"]["full_refresh"] = configured
    streaming.adapter_answers["plan_full_refresh"] = in_place

    streaming.materialize()

    calls, settings = streaming.calls, streaming.settings()
    assert calls.one("adapter.create_stream_view").args[3] is refreshes  # no checkpoint reset applied
    if not refreshes:
        assert calls.names() == CONFIG_READ + STREAMED
        return
    assert calls.names() == CONFIG_READ + FULL_REFRESH + STREAMED
    assert calls.one("adapter.plan_full_refresh").args == (
        streaming.model, streaming.graph, streaming.selected_resources)
    assert calls.one("adapter.reset_streaming_table").args == (
        TABLE, settings.checkpoint, settings.companion_tables(TABLE), in_place)
    assert settings.checkpoint.endswith("checkpoints/gold/counts")


@pytest.mark.parametrize("materialization, config, companions", [
    ("cdc_table", VALID["cdc_table"], ["gold.counts__tombstones"]),
    ("streaming_table", {"expectations": [{"name": "has_id", "expression": "id is not null",
                                           "action": "quarantine"}]}, ["gold.counts__quarantine"]),
])
def test_a_full_refresh_drops_the_tables_kept_beside_the_model(renderer, materialization, config, companions):
    renderer.model = model_node(materialized=materialization, **config)
    renderer.flags.FULL_REFRESH = True

    renderer.materialize(materialization)

    assert renderer.calls.one("adapter.reset_streaming_table").args[2] == companions


def test_a_refused_full_refresh_drops_nothing_and_starts_no_stream(streaming):
    streaming.flags.FULL_REFRESH = True

    def refuse(model, graph, selected):
        raise DbtRuntimeError("Full refresh of counts refused: totals streams from it and would fail.")

    streaming.adapter_answers["plan_full_refresh"] = refuse

    with pytest.raises(DbtRuntimeError, match="totals streams from it"):
        streaming.materialize()
    assert streaming.calls.names() == CONFIG_READ + ["adapter.plan_full_refresh"]


@pytest.mark.parametrize("created, said", [
    (True, "table created with no rows"),
    (False, "table and checkpoint untouched"),
])
@pytest.mark.parametrize("full_refresh", [False, True])
def test_empty_checks_the_query_creates_the_empty_table_and_starts_no_stream(streaming, created, said,
                                                                             full_refresh):
    streaming.flags.EMPTY = True
    streaming.flags.FULL_REFRESH = full_refresh  # --empty --full-refresh drops nothing either
    streaming.adapter_answers["create_empty_table"] = created

    result = streaming.materialize()

    calls, settings = streaming.calls, streaming.settings()
    assert calls.names() == CONFIG_READ + ["adapter.create_empty_table", "store_raw_result", "run_hooks"]
    assert calls.one("adapter.create_stream_view").args == (settings, streaming.sql, VIEW, full_refresh)
    assert calls.one("adapter.create_empty_table").args == (settings, VIEW, TABLE)
    assert calls.one("store_raw_result").kwargs == {
        "name": "main", "code": "EMPTY", "rows_affected": 0,
        "message": "EMPTY run: query checked, no stream started, " + said,
    }
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
    assert renderer.calls.names() == ["adapter.streaming_model_config"]  # no hook, view, drop or stream


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


def test_backfills_run_after_the_stream_and_are_said_in_its_result(renderer):
    renderer.model = model_node(backfills=[{"name": "archive", "path": "archive", "format": "json"}])
    renderer.flags.FULL_REFRESH = True

    renderer.materialize("streaming_table")

    calls, settings = renderer.calls, renderer.settings()
    assert calls.names() == CONFIG_READ + FULL_REFRESH + [
        "adapter.run_streaming_write", "adapter.run_backfills", "store_raw_result", "persist_docs", "run_hooks"]
    assert calls.one("adapter.run_backfills").args == (settings, renderer.sql, TABLE)
    assert calls.one("store_raw_result").kwargs["message"] == "3 rows streamed; backfill 'archive': 7 rows"


def test_empty_runs_no_backfill(renderer):
    renderer.model = model_node(backfills=[{"name": "archive", "path": "archive", "format": "json"}])
    renderer.flags.EMPTY = True

    renderer.materialize("streaming_table")

    assert "adapter.run_backfills" not in renderer.calls.names()
