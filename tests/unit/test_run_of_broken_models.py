"""A run asked only for models that stop on their config stops before Spark; one with any model
that can run goes on (dbt's adapter, relation.py)."""

from __future__ import annotations

from dbt.adapters.spark_streaming.relation import AskedFor, errors_if_none_can_run

GRAPH = {"nodes": {"model.p.a": {"name": "a"}, "model.p.b": {"name": "b"}, "model.p.good": {"name": "good"}}}


def error_of(node):
    return None if node["name"] == "good" else f"Model {node['name']}: config 'x' is not a setting"


def test_every_asked_for_model_with_an_error_gives_each_error():
    assert errors_if_none_can_run(["model.p.a", "model.p.b"], GRAPH, error_of) == [
        ("model.p.a", "Model a: config 'x' is not a setting"), ("model.p.b", "Model b: config 'x' is not a setting")]


def test_one_model_that_can_run_gives_none_and_stops_checking():
    checked = []

    def counting(node):
        checked.append(node["name"])
        return error_of(node)

    assert errors_if_none_can_run(["model.p.good", "model.p.a"], GRAPH, counting) == []
    assert checked == ["good"]
    assert errors_if_none_can_run([], GRAPH, error_of) == []
    assert errors_if_none_can_run(["seed.p.unknown"], GRAPH, error_of) == []  # not a model of the graph


def test_what_was_asked_for_is_taken_once_without_repeats():
    asked = AskedFor()
    for unique_id in ("model.p.a", "model.p.b", "model.p.a", None):
        asked.note(unique_id)
    assert asked.take() == ["model.p.a", "model.p.b"]
    assert asked.take() == []
