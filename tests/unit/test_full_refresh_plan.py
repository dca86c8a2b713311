"""How a full refresh treats the models that stream from the rebuilt one (no JVM)."""

from __future__ import annotations

import pytest

from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.lifecycle.full_refresh import plan, stream_reads_of


def node(name: str, sql: str = "select 1", reads: tuple[str, ...] = (), materialized: str = "streaming_table",
         full_refresh: bool | None = None) -> dict:
    return {
        "unique_id": f"model.p.{name}", "name": name, "resource_type": "model", "raw_code": sql,
        "depends_on": {"nodes": [f"model.p.{read}" for read in reads]},
        "config": {"materialized": materialized, "full_refresh": full_refresh},
    }


def graph(*nodes: dict) -> dict:
    return {n["unique_id"]: n for n in nodes}


BRONZE = node("bronze")
SILVER = node("silver", "select * from stream({{ ref('bronze') }}) where ok", reads=("bronze",))
GOLD = node("gold", "select k, count(*) from stream({{ ref('silver') }}) group by k", reads=("silver",))
DIM = node("dim_view", "select * from {{ ref('bronze') }}", reads=("bronze",), materialized="view")
NODES = graph(BRONZE, SILVER, GOLD, DIM)


def test_a_reader_left_out_of_the_run_is_named_with_the_command_that_rebuilds_it():
    with pytest.raises(StreamingModelError) as refused:
        plan(BRONZE, NODES, [BRONZE["unique_id"]])
    message = str(refused.value)
    assert "Model bronze" in message and "silver" in message
    assert "dbt run --full-refresh --select bronze+" in message
    assert "dim_view" not in message  # a view re-reads the table; nothing of it breaks


def test_readers_rebuilt_in_the_same_run_let_the_table_be_dropped():
    result = plan(BRONZE, NODES, [n for n in NODES])
    assert not result.in_place
    assert [reader.name for reader in result.readers] == ["silver"]


def test_a_reader_of_a_reader_left_out_is_found_too():
    with pytest.raises(StreamingModelError, match="gold"):
        plan(BRONZE, NODES, [BRONZE["unique_id"], SILVER["unique_id"]])


def test_a_reader_streaming_through_an_ephemeral_model_is_found():
    readable = node("readable", "select * from stream({{ ref('bronze') }})", reads=("bronze",),
                    materialized="ephemeral")
    applied = node("applied", "select * from {{ ref('readable') }}", reads=("readable",), materialized="cdc_table")
    nodes = graph(BRONZE, readable, applied)
    with pytest.raises(StreamingModelError, match="applied"):
        plan(BRONZE, nodes, [BRONZE["unique_id"]])
    assert [reader.name for reader in plan(BRONZE, nodes, list(nodes)).readers] == ["applied"]


def test_a_reader_with_full_refresh_false_is_not_rebuilt():
    frozen = node("silver", SILVER["raw_code"], reads=("bronze",), full_refresh=False)
    with pytest.raises(StreamingModelError, match="silver"):
        plan(BRONZE, graph(BRONZE, frozen), [BRONZE["unique_id"], frozen["unique_id"]])


@pytest.mark.parametrize("sql", [
    "select * from {{ stream_appends(ref('bronze')) }}",
    "select * from {{ stream_changes(ref('bronze')) }}",
    "select * from stream({{ ref('bronze') }}) with ('skipChangeCommits' = 'true')",
])
def test_readers_that_follow_rewrites_continue_and_the_table_is_emptied_in_place(sql):
    follower = node("follower", sql, reads=("bronze",))
    result = plan(BRONZE, graph(BRONZE, follower), [BRONZE["unique_id"]])
    assert result.in_place


def test_a_reader_that_also_streams_the_table_plainly_does_not_follow_rewrites():
    sql = ("select * from {{ stream_appends(ref('bronze')) }} a join stream({{ ref('bronze') }}) b "
           "using (id)")
    mixed = node("mixed", sql, reads=("bronze",))
    with pytest.raises(StreamingModelError, match="mixed"):
        plan(BRONZE, graph(BRONZE, mixed), [BRONZE["unique_id"]])


def test_stream_reads_are_told_from_batch_reads_and_from_other_models():
    sql = ("select * from stream( {{ref(\"bronze\")}} ) s join {{ ref('bronze') }} b using (id) "
           "join stream({{ ref('bronze_two') }}) t using (id)")
    assert stream_reads_of(sql, "bronze") == ['stream( {{ref("bronze")}} )']
