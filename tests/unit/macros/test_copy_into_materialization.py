"""copy_into (materializations/copy_into.sql): the config read, its hooks and one adapter call
(runtime/run/materialize.py loads); a full refresh as dbt resolves it, --empty's result, config
errors and the run's copy_into_force var."""

from __future__ import annotations

import re

import pytest
from dbt_common.exceptions import CompilationError

from macro_rendering import model_node

TABLE = "bronze.loads"
START = ["adapter.streaming_model_config", "run_hooks"]
LOADED = ["adapter.materialize", "store_raw_result", "persist_docs", "run_hooks"]


@pytest.fixture
def copy_into(renderer):
    renderer.model = model_node("loads", "copy_into", schema="bronze")
    renderer.selected_resources = ["model.lakehouse.loads"]
    return renderer


def test_a_run_loads_the_new_files_into_the_table(copy_into):
    result = copy_into.materialize()

    calls, settings = copy_into.calls, copy_into.settings()
    assert calls.names() == START + LOADED
    assert settings.materialized == "copy_into" and settings.copy_source.name == "landing.events"
    assert calls.one("adapter.materialize").args == (
        settings, copy_into.sql, TABLE, False, copy_into.model, copy_into.graph, copy_into.selected_resources)
    assert calls.one("store_raw_result").kwargs == {
        "name": "main", "message": "2 files loaded", "code": "COPIED", "rows_affected": 20}
    assert calls.of("run_hooks")[0].args == (copy_into.pre_hooks,)
    assert calls.of("run_hooks")[1].args == (copy_into.post_hooks,)
    (relation,) = result["relations"]
    assert (relation.render(), relation.type) == (TABLE, "table")


@pytest.mark.parametrize("flag, configured, refreshes", [
    (True, None, True), (False, True, True), (True, False, False), (False, None, False),
])
def test_a_full_refresh_is_asked_of_the_load_as_dbt_resolves_it(copy_into, flag, configured, refreshes):
    copy_into.flags.FULL_REFRESH = flag
    if configured is not None:
        copy_into.model["config"]["full_refresh"] = configured

    copy_into.materialize()

    assert copy_into.calls.names() == START + LOADED
    assert copy_into.calls.one("adapter.materialize").args[3] is refreshes
    # the load log is a copy_into model's checkpoint
    assert copy_into.settings().checkpoint.endswith("checkpoints/bronze/loads")


def test_empty_stores_what_the_load_said_and_persists_no_docs(copy_into):
    said = "EMPTY run: no files loaded (table and load log untouched)"
    copy_into.adapter_answers["materialize"] = {"code": "EMPTY", "message": said, "rows_affected": 0}

    result = copy_into.materialize()

    assert copy_into.calls.names() == START + ["adapter.materialize", "store_raw_result", "run_hooks"]
    assert copy_into.calls.one("store_raw_result").kwargs == {
        "name": "main", "code": "EMPTY", "rows_affected": 0, "message": said}
    assert [relation.render() for relation in result["relations"]] == [TABLE]


@pytest.mark.parametrize("node, message", [
    ({"force": "maybe"}, "Model loads: force 'maybe' is not valid"),
    ({"output_mode": "complete"}, "Model loads: a copy_into model appends the rows of each load"),
    ({"sources": []}, "Model loads: copy_into loads the files of one source declared with meta.stream"),
])
def test_a_config_error_is_a_compilation_error_before_anything_runs(copy_into, node, message):
    copy_into.model = model_node("loads", "copy_into", schema="bronze", **node)
    copy_into.flags.FULL_REFRESH = True

    with pytest.raises(CompilationError, match=re.escape(message)):
        copy_into.materialize()
    assert copy_into.calls.names() == ["adapter.streaming_model_config"]


@pytest.mark.parametrize("value, force", [(None, False), (True, True), ("true", True)])
def test_the_runs_copy_into_force_var_reaches_the_load(copy_into, value, force):
    copy_into.vars["copy_into_force"] = value

    copy_into.materialize()

    assert copy_into.calls.one("adapter.streaming_model_config").args[2] == {
        "stream_trigger": None, "copy_into_force": value}
    assert copy_into.calls.one("adapter.materialize").args[0].force is force


def test_a_wrong_copy_into_force_var_is_a_config_error(copy_into):
    copy_into.vars["copy_into_force"] = "maybe"

    with pytest.raises(CompilationError, match=re.escape("--vars '{copy_into_force: true}'")):
        copy_into.materialize()
    assert copy_into.calls.names() == ["adapter.streaming_model_config"]
