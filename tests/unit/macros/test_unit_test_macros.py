"""dbt unit tests on this adapter: the `unit` materialisation (materializations/unit.sql) and the
root project's get_fixture_sql override (adapter/dbt_spark_streaming/project_macros/unit_test_fixture.sql)."""

from __future__ import annotations

import re

import pytest

from macro_rendering import Relation

ACTUAL = {
    "view": "test_counts__actual",
    "columns": {"id": "int", "kind": "string"},
    "quoted": {"id": "`id`"},
}


def squeezed(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# --- the unit materialisation -----------------------------------------------------------------

@pytest.fixture
def unit_test(renderer):
    renderer.model = {
        "name": "test_counts", "resource_type": "unit_test",
        "unique_id": "unit_test.lakehouse.counts.test_counts", "config": {},
    }
    renderer.sql = "select id, kind from landing__events__view"
    renderer.adapter_answers["unit_test_actual_rows"] = ACTUAL
    return renderer


def test_expected_rows_are_compared_with_the_actual_view_on_their_columns(unit_test):
    expected = [{"id": 1, "Kind": "a"}]
    unit_test.model["config"]["expected_rows"] = expected

    result = unit_test.materialize("unit")

    calls = unit_test.calls
    assert result == {"relations": []}
    assert calls.one("adapter.unit_test_actual_rows").args == (
        unit_test.model, unit_test.graph, unit_test.sql, expected)
    assert calls.one("get_expected_sql").args == (expected, ACTUAL["columns"], ACTUAL["quoted"])
    # a column the actual rows quote is compared as quoted there, any other as the adapter quotes it
    compare = calls.one("get_unit_test_sql")
    assert compare.args == ("select * from test_counts__actual", "select 1 as id", ["`id`", "`Kind`"])
    statement = calls.one("statement")
    assert statement.args == ("main",) and statement.kwargs == {"fetch_result": True, "sql": compare.result}
    # the views go once the comparison ran
    assert calls.names()[-2:] == ["statement", "adapter.drop_unit_test_views"]
    assert calls.one("adapter.drop_unit_test_views").args == ("test_counts",)


def test_expected_sql_is_compared_on_the_actual_columns(unit_test):
    unit_test.model["config"]["expected_sql"] = "select 1 as id, 'a' as kind"

    unit_test.materialize("unit")

    calls = unit_test.calls
    assert "get_expected_sql" not in calls.names()
    assert calls.one("adapter.unit_test_actual_rows").args[3] is None
    assert calls.one("get_unit_test_sql").args == (
        "select * from test_counts__actual", "select 1 as id, 'a' as kind", ["`id`", "`kind`"])


# --- get_fixture_sql --------------------------------------------------------------------------

TYPES = {"id": "int", "kind": "string"}


@pytest.fixture
def fixture(renderer):
    """A unit test input: a source declared with meta.stream (no table of its own)."""
    renderer.model = {"name": "events", "source_name": "landing", "resource_type": "source"}
    renderer.this = Relation.create(schema="landing", identifier="events")
    renderer.adapter_answers["unit_test_input_columns"] = lambda relation, source, name, batched: (
        {**TYPES, "_batch": "int"} if batched else TYPES)
    return renderer


def test_given_column_types_are_dbts_fixture(fixture):
    rows = [{"id": 1}]

    sql = fixture.call("get_fixture_sql", rows, {"id": "bigint"})

    assert sql == "-- dbt's fixture"
    assert fixture.calls.one("dbt.get_fixture_sql").args == (rows, {"id": "bigint"})
    assert not [name for name in fixture.calls.names() if name.startswith("adapter.")]


def test_an_input_with_a_table_is_dbts_fixture(fixture):
    fixture.tables.add("landing.events")

    assert fixture.call("get_fixture_sql", [{"id": 1}], {}) == "-- dbt's fixture"
    assert fixture.calls.names() == ["load_relation", "dbt.get_fixture_sql"]


def test_an_input_without_a_table_takes_its_types_from_the_adapter(fixture):
    sql = fixture.call("get_fixture_sql", [{"id": 1}, {"id": 2, "kind": "b"}], {})

    assert fixture.calls.one("adapter.unit_test_input_columns").args == (
        "landing.events", "landing", "events", False)
    assert "dbt.get_fixture_sql" not in fixture.calls.names()
    assert squeezed(sql) == squeezed("""
        -- Fixture for events
        select cast('1' as int) as `id`, cast(null as string) as `kind`
        union all
        select cast('2' as int) as `id`, cast('b' as string) as `kind`
    """)


def test_rows_with_batch_are_a_micro_batch_scenario_even_over_a_table(fixture):
    fixture.tables.add("landing.events")

    sql = fixture.call("get_fixture_sql", [{"id": 1, "_batch": 1}, {"id": 2, "_batch": 2}], {})

    assert fixture.calls.one("adapter.unit_test_input_columns").args[3] is True
    assert "dbt.get_fixture_sql" not in fixture.calls.names()
    assert "cast('2' as int) as `_batch`" in sql and sql.count("union all") == 1


def test_no_given_rows_is_an_empty_select_of_every_column(fixture):
    sql = fixture.call("get_fixture_sql", [], {})

    assert squeezed(sql) == squeezed("""
        -- Fixture for events
        select cast(null as int) as `id`, cast(null as string) as `kind` limit 0
    """)
