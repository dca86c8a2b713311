"""The adapter's other macros: the on-run-end hook (serve_streaming_queries.sql), `dbt show` of a
streaming model (show.sql), the run-operations reset_checkpoint and rollback_redeploy, the change
feed readers (change_feed.sql) and the run's --vars (streaming_model_config.sql)."""

from __future__ import annotations

import re

import pytest
from dbt.artifacts.schemas.results import RunStatus, TestStatus
from dbt_common.exceptions import CompilationError

from macro_rendering import Relation, model_node


def squeezed(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def results(*statuses):
    return [type("Result", (), {"status": status})() for status in statuses]


# --- on-run-end: serve_streaming_queries ------------------------------------------------------

@pytest.mark.parametrize("which", ["run", "build"])
def test_a_run_that_succeeded_finishes_then_serves_its_queries(renderer, which):
    renderer.flags.WHICH = which
    renderer.results = results(RunStatus.Success, TestStatus.Pass, TestStatus.Warn, RunStatus.Skipped)

    renderer.call("serve_streaming_queries")

    assert renderer.calls.names() == ["adapter.finish_streaming_run", "adapter.serve_streams"]


@pytest.mark.parametrize("failed", [RunStatus.Error, TestStatus.Fail, TestStatus.Error])
def test_a_run_with_a_failed_node_stops_its_queries_and_serves_none(renderer, failed):
    renderer.results = results(RunStatus.Success, failed)

    renderer.call("serve_streaming_queries")

    assert renderer.calls.names() == ["adapter.stop_streams", "adapter.finish_streaming_run"]


@pytest.mark.parametrize("which, execute", [("test", True), ("seed", True), ("compile", True), ("run", False)])
def test_other_commands_serve_nothing(renderer, which, execute):
    renderer.flags.WHICH, renderer.execute = which, execute
    renderer.results = results(RunStatus.Success)

    renderer.call("serve_streaming_queries")

    assert renderer.calls.names() == []


# --- dbt show: spark_streaming__get_limit_sql -------------------------------------------------

@pytest.mark.parametrize("materialized", ["streaming_table", "cdc_table", "copy_into"])
def test_show_of_a_streaming_model_shows_the_rows_of_its_table(renderer, materialized):
    renderer.model = model_node(materialized=materialized)
    renderer.tables.add("gold.counts")

    sql = renderer.call("spark_streaming__get_limit_sql", renderer.sql, 10)

    assert squeezed(sql) == "select * from gold.counts limit 10"
    assert renderer.calls.one("load_relation").args == ("gold.counts",)


def test_show_of_a_streaming_model_without_a_table_says_to_build_it(renderer):
    with pytest.raises(CompilationError) as error:
        renderer.call("spark_streaming__get_limit_sql", renderer.sql, 10)

    assert squeezed(str(error.value.msg)) == (
        "Model counts is a streaming_table and has no table yet: `dbt show` shows the rows of its "
        "table. Build it first with `dbt run --select +counts`.")


@pytest.mark.parametrize("model", [
    model_node(materialized="table"),
    model_node(materialized="streaming_table", resource_type="test"),
    None,  # dbt show --inline
])
@pytest.mark.parametrize("limit, said", [(5, " limit 5"), (None, "")])
def test_show_of_anything_else_is_dbts_own(renderer, model, limit, said):
    renderer.model = model

    sql = renderer.call("spark_streaming__get_limit_sql", "select 1 as id", limit)

    assert squeezed(sql) == "select 1 as id" + said
    assert renderer.calls.names() == []


# --- run-operations: reset_checkpoint, rollback_redeploy -------------------------------------

@pytest.fixture
def project(renderer):
    """A project's graph with a model of each materialisation."""
    renderer.other_nodes = [
        model_node("patients", "cdc_table", schema="silver"),
        model_node("loads", "copy_into", schema="bronze"),
        model_node("daily", "table"),
        model_node("assert_counts", "test", resource_type="test"),
    ]
    renderer.model = None  # a run-operation has no model
    renderer.adapter_answers["reset_checkpoint"] = "Checkpoint of counts reset."
    renderer.adapter_answers["rollback_redeploy"] = "counts rolled back."
    return renderer


def counts_node(renderer):
    return renderer.graph["nodes"]["model.lakehouse.counts"]


@pytest.fixture
def counts(project):
    project.other_nodes.append(model_node())
    return project


def test_reset_checkpoint_resets_the_selected_models_checkpoint(counts):
    counts.vars["stream_trigger"] = "10 seconds"

    counts.call("reset_checkpoint", select="counts", from_version=12)

    call = counts.calls.one("adapter.reset_checkpoint")
    assert call.args == (
        counts_node(counts), counts.graph, {"stream_trigger": "10 seconds", "copy_into_force": None},
        {"from_now": None, "from_version": 12, "from_timestamp": None, "from_offsets": None},
        "gold.counts",
    )
    assert counts.printed == ["Checkpoint of counts reset."]


def test_rollback_redeploy_rolls_back_the_selected_model(counts):
    counts.call("rollback_redeploy", select="counts")

    assert counts.calls.one("adapter.rollback_redeploy").args == (
        counts_node(counts), counts.graph, {"stream_trigger": None, "copy_into_force": None}, "gold.counts")
    assert counts.printed == ["counts rolled back."]


@pytest.mark.parametrize("operation", ["reset_checkpoint", "rollback_redeploy"])
@pytest.mark.parametrize("select, said", [(None, "no model given"), ("count", "no model named count"),
                                          ("assert_counts", "no model named assert_counts")])
def test_an_operation_without_a_model_lists_the_streaming_models(counts, operation, select, said):
    with pytest.raises(CompilationError) as error:
        counts.call(operation, select=select)

    message = error.value.msg
    assert message.startswith(
        f"{operation}: {said} in this project. Give select: <model>, one of its streaming models: ")
    assert "counts" in message and "loads" not in message and "daily" not in message
    if operation == "reset_checkpoint":  # the models whose checkpoint can be reset, sorted
        assert message.endswith("streaming models: counts, patients.")
    else:  # only a streaming_table is redeployed, so only one can be rolled back
        assert message.endswith("streaming models: counts.")
    assert counts.calls.names() == []


def test_a_project_without_streaming_models_says_none(project):
    project.other_nodes = [model_node("daily", "table"), model_node("loads", "copy_into")]

    with pytest.raises(CompilationError, match=re.escape("one of its streaming models: none.")):
        project.call("reset_checkpoint", select="daily_totals")


@pytest.mark.parametrize("operation", ["reset_checkpoint", "rollback_redeploy"])
def test_an_operation_does_nothing_while_dbt_parses(counts, operation):
    counts.execute = False

    counts.call(operation, select="counts")

    assert counts.calls.names() == [] and counts.printed == []


# --- change feed readers, run vars ------------------------------------------------------------

@pytest.mark.parametrize("macro, option", [
    ("stream_changes", "'readChangeFeed' = 'true'"),
    ("stream_appends", "'skipChangeCommits' = 'true'"),
])
def test_a_change_feed_reader_is_a_stream_with_its_delta_option(renderer, macro, option):
    sql = renderer.call(macro, Relation.create(schema="silver", identifier="patients"))

    assert sql.strip() == f"stream(silver.patients) with ({option})"


def test_the_runs_vars_that_change_a_streaming_config(renderer):
    assert renderer.call("streaming_run_vars") == {"stream_trigger": None, "copy_into_force": None}
    renderer.vars.update(stream_trigger={"once": True}, copy_into_force=True, other=1)
    assert renderer.call("streaming_run_vars") == {"stream_trigger": {"once": True}, "copy_into_force": True}
