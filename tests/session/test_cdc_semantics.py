"""The SCD writers batch by batch (apply_change_batch, as a cdc_table's foreachBatch calls it):
a sequence of several columns, partial updates, tracked history, truncates, unplaceable rows,
and a replayed batch."""

from __future__ import annotations

import pytest

from dbt_spark_streaming.config.cdc import ApplyChanges
from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.writes.cdc.apply_changes import apply_change_batch, create_tables_if_missing
from dbt_spark_streaming.writes.cdc.change_rows import FeedShape
from python_runners.testing.cdc_reference import scd1, scd2

pytestmark = pytest.mark.slow  # the scd1/scd2 matrix, several MERGEs per case: make test runs it, test-fast does not

SCHEMA = "cdc_semantics"
FEED = "id bigint, name string, ward string, op string, day int, n int"


@pytest.fixture
def table(spark, request):
    spark.sql(f"create schema if not exists {SCHEMA}")
    name = f"{SCHEMA}.{request.node.name.replace('[', '_').replace(']', '')}"
    yield name
    for dropped in (name, f"{name}__tombstones"):
        spark.sql(f"drop table if exists {dropped}")


def apply(spark, table: str, settings: dict, batches: list[list[tuple]], app_id: str = "app") -> FeedShape:
    changes = ApplyChanges.from_config("patients", {"keys": "id", "except_columns": ["op"],
                                                    "apply_as_deletes": "op = 'D'", **settings})
    shape = FeedShape(changes, spark.createDataFrame([], FEED).schema)
    create_tables_if_missing(spark, shape, table, (), {}, exists=spark.catalog.tableExists(table))
    for batch_id, rows in enumerate(batches):
        apply_change_batch(spark.createDataFrame(rows, FEED), batch_id, app_id, table, shape)
    return shape


def rows(spark, table: str, *columns: str) -> list[tuple]:
    return sorted(tuple(row) for row in spark.table(table).select(*columns).collect())


def as_dicts(batches):
    names = [field.split()[0] for field in FEED.split(", ")]
    return [dict(zip(names, row)) for batch in batches for row in batch]


def test_a_sequence_of_several_columns_orders_changes_as_a_struct(spark, table):
    # (day, n): day 2 n 1 comes after day 1 n 9; the late (1, 5) lands between two versions.
    batches = [
        [(1, "ann", "A", "I", 1, 1), (1, "ann", "B", "U", 1, 9), (1, "ann", "C", "U", 2, 1)],
        [(1, "ann", "D", "U", 1, 5), (2, "bo", "A", "I", 1, 1), (2, None, None, "D", 3, 0)],
    ]
    apply(spark, table, {"sequence_by": ["day", "n"], "stored_as": "scd2"}, batches)

    expected = scd2(as_dicts(batches), ["id"], ["day", "n"], lambda c: c["op"] == "D",
                    ["id", "name", "ward", "day", "n"])
    history = ["id", "name", "ward", "day", "n", "__start_at", "__end_at"]
    assert rows(spark, table, *history) == sorted(
        tuple(tuple(v) if isinstance(v, tuple) else v for v in (row[c] for c in history))
        for row in expected
    )
    assert rows(spark, table, "ward", "__start_at.day", "__start_at.n", "__end_at.n") == [
        ("A", 1, 1, 0), ("A", 1, 1, 5), ("B", 1, 9, 1), ("C", 2, 1, None), ("D", 1, 5, 9),
    ]


def test_ignore_null_updates_keeps_stored_values_but_not_across_a_delete(spark, table):
    batches = [
        [(1, "ann", "A", "I", 1, 0), (2, "bo", "A", "I", 1, 0)],
        # id 1: a partial update; id 2: deleted, then inserted again without a name, in one batch
        [(1, None, "B", "U", 2, 0), (2, None, None, "D", 2, 0), (2, None, "C", "I", 3, 0),
         (1, None, None, "U", 3, 0)],
    ]
    apply(spark, table, {"sequence_by": "day", "ignore_null_updates": True}, batches)

    assert rows(spark, table, "id", "name", "ward", "day") == [(1, "ann", "B", 3), (2, None, "C", 3)]


def test_scd2_with_ignore_null_updates_fills_each_version_from_the_one_before(spark, table):
    batches = [[(1, "ann", "A", "I", 1, 0)], [(1, None, "B", "U", 2, 0)]]
    apply(spark, table, {"sequence_by": "day", "stored_as": "scd2", "ignore_null_updates": True}, batches)

    assert rows(spark, table, "name", "ward", "__start_at", "__end_at") == [
        ("ann", "A", 1, 2), ("ann", "B", 2, None),
    ]


def test_only_tracked_columns_make_versions_other_changes_update_in_place(spark, table):
    batches = [
        [(1, "ann", "A", "I", 1, 0), (1, "anne", "A", "U", 2, 0)],
        [(1, "anne", "B", "U", 3, 0), (1, "annie", "B", "U", 4, 0)],
    ]
    apply(spark, table, {"sequence_by": "day", "stored_as": "scd2", "track_history_columns": ["ward"]},
          batches)

    assert rows(spark, table, "name", "ward", "day", "__start_at", "__end_at") == [
        ("anne", "A", 2, 1, 3), ("annie", "B", 4, 3, None),
    ]


def test_a_truncate_empties_the_table_and_keeps_older_changes_out(spark, table):
    batches = [
        [(1, "ann", "A", "I", 1, 0), (2, "bo", "A", "I", 5, 0)],
        [(None, None, None, "T", 3, 0), (3, "cy", "A", "I", 4, 0)],
        [(1, "ann", "B", "U", 2, 0), (4, "di", "A", "I", 6, 0)],  # day 2: before the truncate
    ]
    apply(spark, table, {"sequence_by": "day", "apply_as_truncates": "op = 'T'"}, batches)

    # id 2 (day 5) is newer than the truncate (day 3) and stays; id 1 and its late update go.
    assert rows(spark, table, "id", "day") == [(2, 5), (3, 4), (4, 6)]


def test_a_change_without_a_key_or_sequence_fails_the_batch_and_writes_nothing(spark, table):
    with pytest.raises(StreamingModelError) as error:
        apply(spark, table, {"sequence_by": "day"}, [[(1, "ann", "A", "I", 1, 0), (2, "bo", "A", "I", None, 0)]])

    assert "Model patients" in str(error.value) and "null sequence_by (day)" in str(error.value)
    assert spark.table(table).count() == 0


@pytest.mark.parametrize("stored_as", ["scd1", "scd2"])
def test_a_batch_applied_again_under_its_transaction_id_changes_nothing(spark, table, stored_as):
    batches = [[(1, "ann", "A", "I", 1, 0), (2, "bo", "A", "I", 1, 0)],
               [(1, "ann", "B", "U", 2, 0), (2, None, None, "D", 2, 0)]]
    shape = apply(spark, table, {"sequence_by": "day", "stored_as": stored_as}, batches)
    before = rows(spark, table, *spark.table(table).columns)
    version = spark.sql(f"describe history {table}").agg({"version": "max"}).first()[0]

    # batch 1 again, as Spark replays it after a crash; a change only it brings must not appear
    replay = batches[1] + [(3, "cy", "A", "I", 2, 0)]
    apply_change_batch(spark.createDataFrame(replay, FEED), 1, "app", table, shape)

    assert rows(spark, table, *spark.table(table).columns) == before
    assert spark.sql(f"describe history {table}").agg({"version": "max"}).first()[0] == version
    expected = (scd1 if stored_as == "scd1" else scd2)(
        as_dicts(batches), ["id"], ["day"], lambda c: c["op"] == "D", ["id", "name", "ward", "day", "n"]
    )
    assert len(before) == len(expected)


# Key 2 at day 30: 'p' and 'q' in one batch, 'r' in a later one (issue 35's feed).
TIED_BATCHES = [
    [(1, "ann", "A", "U", 10, 0), (2, "bo", "p", "U", 30, 0), (2, "bo", "q", "U", 30, 0)],
    [(2, "bo", "r", "U", 30, 0), (1, "ann", "A", "U", 10, 0)],
]


@pytest.mark.parametrize("stored_as", ["scd1", "scd2"])
def test_a_tie_on_sequence_fails_by_default_naming_the_key_and_writing_nothing(spark, table, stored_as):
    with pytest.raises(StreamingModelError) as error:
        apply(spark, table, {"sequence_by": "day", "stored_as": stored_as}, TIED_BATCHES[:1])

    message = str(error.value)
    assert "Model patients: 1 change(s) in one batch tie" in message
    assert '"id":2' in message and '"sequence_by":30' in message and "on_sequence_tie='keep_last_landed'" in message
    assert spark.table(table).count() == 0


@pytest.mark.parametrize("stored_as", ["scd1", "scd2"])
def test_a_tie_with_the_tables_change_in_a_later_batch_fails_too(spark, table, stored_as):
    apply(spark, table, {"sequence_by": "day", "stored_as": stored_as}, [[(2, "bo", "p", "U", 30, 0)]])
    shape = apply(spark, table, {"sequence_by": "day", "stored_as": stored_as}, [])
    with pytest.raises(StreamingModelError) as error:
        apply_change_batch(spark.createDataFrame([(2, "bo", "r", "U", 30, 0)], FEED), 1, "app", table, shape)

    assert "of this batch and the table tie" in str(error.value) and '"id":2' in str(error.value)
    assert rows(spark, table, "id", "ward") == [(2, "p")]


@pytest.mark.parametrize("stored_as", ["scd1", "scd2"])
def test_keep_last_landed_keeps_the_later_batchs_change_and_counts_the_others(spark, table, stored_as):
    from dbt_spark_streaming.progress import batch_notes

    app_id = f"ties-{stored_as}"
    apply(spark, table, {"sequence_by": "day", "stored_as": stored_as, "on_sequence_tie": "keep_last_landed"},
          TIED_BATCHES, app_id=app_id)

    # In batch 0 the greatest of p and q ('q') is kept; batch 1's 'r' landed later and replaces it.
    assert rows(spark, table, "id", "ward", "day") == [(1, "A", 10), (2, "r", 30)]
    assert batch_notes.of(app_id, 0, "cdc_changes_tied") == 1
    assert batch_notes.of(app_id, 1, "cdc_changes_tied") == 1  # the identical repeat of id 1 is no tie


@pytest.mark.parametrize("stored_as", ["scd1", "scd2"])
def test_a_repeated_identical_change_is_no_tie(spark, table, stored_as):
    batches = [[(1, "ann", "A", "I", 1, 0), (1, "ann", "A", "I", 1, 0)], [(1, "ann", "A", "I", 1, 0)]]
    apply(spark, table, {"sequence_by": "day", "stored_as": stored_as}, batches)

    assert rows(spark, table, "id", "ward") == [(1, "A")]


def test_keep_last_landed_lets_a_later_upsert_replace_a_delete_at_the_same_sequence(spark, table):
    settings = {"sequence_by": "day", "on_sequence_tie": "keep_last_landed"}
    apply(spark, table, settings, [[(1, "ann", "A", "I", 1, 0)], [(1, None, None, "D", 5, 0)], [(1, "ann", "B", "U", 5, 0)]])

    assert rows(spark, table, "id", "ward", "day") == [(1, "B", 5)]


def test_an_empty_batch_spark_prunes_when_planning_changes_nothing(spark, table):
    # A Delta commit with no rows (a table property set upstream) is a batch of an empty relation.
    apply(spark, table, {"sequence_by": "day"}, [[(1, "ann", "A", "I", 1, 0)], []])

    assert rows(spark, table, "id", "ward") == [(1, "A")]
