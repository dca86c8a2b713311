"""on_query_change='redeploy': a changed silver model is rebuilt beside its table and swapped in
once caught up; its streaming reader (gold) is rebuilt over the swapped table; a rollback puts
the old version back."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pyspark.sql.streaming import StreamingQueryListener

from dbt_results import failure_messages, node_results
from streaming_projects import write_streaming_project

pytestmark = pytest.mark.slow  # a redeploy, its rebuild and its rollback: make test runs it, test-fast does not

SCHEMA = "redeploy"
INPUT = "redeploy_in.events"
SILVER = f"{SCHEMA}.readings"
GOLD = f"{SCHEMA}.kind_counts"
OLD_SILVER = f"select id, kind from stream({INPUT})"
NEW_SILVER = f"select id, kind, upper(kind) as kind_upper from stream({INPUT})"
GOLD_SQL = "{{ config(output_mode='complete') }}\nselect kind, count(*) as readings from stream({{ ref('readings') }}) group by kind"


def silver_model(sql: str) -> str:
    return f"{{{{ config(on_query_change='redeploy') }}}}\n{sql}"


def silver_rows(spark) -> list[tuple]:
    return sorted(tuple(row) for row in spark.table(SILVER).collect())


def gold_matches_a_recompute_over_silver(spark) -> bool:
    streamed = sorted(tuple(row) for row in spark.table(GOLD).collect())
    recomputed = sorted(tuple(row) for row in spark.sql(
        f"select kind, count(*) from {SILVER} group by kind").collect())
    return streamed == recomputed


class SilverReads(StreamingQueryListener):
    """What a reader of silver sees each time the new version being built commits a batch."""

    def __init__(self, spark):
        self.spark, self.seen = spark, []

    def onQueryProgress(self, event):
        if event.progress.name == f"{SILVER}__next":
            table = self.spark.read.table(SILVER)
            self.seen.append((tuple(table.columns), sorted(tuple(row) for row in table.collect())))

    def onQueryStarted(self, event):
        pass

    def onQueryIdle(self, event):
        pass

    def onQueryTerminated(self, event):
        pass


def test_a_redeploy_swaps_in_the_new_version_rebuilds_its_reader_and_rolls_back(
    dbt, spark, tmp_path, lakehouse
):
    project = write_streaming_project(tmp_path / "project", "redeploying", SCHEMA, {
        "readings": silver_model(OLD_SILVER), "kind_counts": GOLD_SQL,
    })
    silver_file = Path(project) / "models" / "readings.sql"
    checkpoint = Path(lakehouse.checkpoint_path(f"{SCHEMA}/readings"))
    spark.sql("create schema if not exists redeploy_in")
    spark.sql(f"create or replace table {INPUT} (id int, kind string) using delta")
    spark.sql(f"insert into {INPUT} values (1, 'a'), (2, 'b'), (3, 'a'), (4, 'c')")
    first = dbt("run", project_dir=str(project))
    assert first.success, failure_messages(first)
    old_rows = silver_rows(spark)
    before_swap = spark.sql(f"describe history {SILVER}").first().version
    table_id = spark.sql(f"describe detail {SILVER}").first().id

    silver_file.write_text(silver_model(NEW_SILVER))
    spark.sql(f"insert into {INPUT} values (5, 'b'), (6, 'd')")
    reads = SilverReads(spark)
    spark.streams.addListener(reads)
    try:
        redeployed = dbt("run", project_dir=str(project))
    finally:
        spark.streams.removeListener(reads)

    assert redeployed.success, failure_messages(redeployed)
    said = node_results(redeployed)
    assert "redeployed (" in said["readings"].message and "rollback_redeploy --args '{select: readings}'" in said["readings"].message
    assert "redeployed (redeploy.readings, which it streams from" in said["kind_counts"].message
    # While the new version was built, readers saw the old version, complete.
    assert reads.seen and all(seen == (("id", "kind"), old_rows) for seen in reads.seen)
    # After the swap: every row once, the new column for all of them, the same Delta table.
    rows = silver_rows(spark)
    assert [row[0] for row in rows] == [1, 2, 3, 4, 5, 6]
    assert all(kind_upper == kind.upper() for _, kind, kind_upper in rows)
    assert spark.sql(f"describe detail {SILVER}").first().id == table_id
    assert gold_matches_a_recompute_over_silver(spark)
    assert not spark.catalog.tableExists(f"{SILVER}__next")
    assert (checkpoint.parent / "readings__previous").is_dir()

    # The redeployed models go on from their new checkpoints: the next row once, nothing redeployed.
    spark.sql(f"insert into {INPUT} values (7, 'a')")
    again = dbt("run", project_dir=str(project))
    assert again.success, failure_messages(again)
    assert all("redeployed" not in result.message for result in node_results(again).values())
    assert [row[0] for row in silver_rows(spark)] == [1, 2, 3, 4, 5, 6, 7]
    assert gold_matches_a_recompute_over_silver(spark)

    rolled_back = dbt("run-operation", "rollback_redeploy", "--args", "{select: readings}",
                      project_dir=str(project))
    assert rolled_back.success, failure_messages(rolled_back)
    assert spark.table(SILVER).columns == ["id", "kind"]
    assert silver_rows(spark) == old_rows
    assert spark.sql(f"describe history {SILVER}").first().operation in ("RESTORE", "SET TBLPROPERTIES")

    # With the change reverted, the old checkpoint goes on: rows 5-7 once; gold rebuilt over it.
    silver_file.write_text(silver_model(OLD_SILVER))
    after = dbt("run", project_dir=str(project))
    assert after.success, failure_messages(after)
    ids = [row[0] for row in silver_rows(spark)]
    assert ids == [1, 2, 3, 4, 5, 6, 7] and max(Counter(ids).values()) == 1
    assert "redeployed" not in node_results(after)["readings"].message
    assert "redeployed" in node_results(after)["kind_counts"].message
    assert gold_matches_a_recompute_over_silver(spark)
    assert before_swap < spark.sql(f"describe history {SILVER}").first().version


def test_a_redeploy_while_serving_swaps_the_served_query_and_leaves_the_others_serving(dbt, spark, tmp_path):
    source = "redeploy_serve_in.events"
    project = write_streaming_project(tmp_path / "serving", "redeploy_serving", "redeploy_serve", {
        "landed": f"select id, kind from stream({source})",
        "served": silver_model("select id, kind from stream({{ ref('landed') }})"),
    })
    spark.sql("create schema if not exists redeploy_serve_in")
    spark.sql(f"create or replace table {source} (id int, kind string) using delta")
    spark.sql(f"insert into {source} values (1, 'a'), (2, 'b')")
    assert dbt("run", project_dir=str(project)).success

    (Path(project) / "models" / "served.sql").write_text(silver_model(
        "select id, kind, upper(kind) as kind_upper from stream({{ ref('landed') }})"))
    spark.sql(f"insert into {source} values (3, 'c')")
    try:
        serving = dbt("run", "--vars", "{stream_trigger: {processing_time: '1 second'}}",
                      project_dir=str(project))
        assert serving.success, failure_messages(serving)
        assert "redeployed (" in node_results(serving)["served"].message
        queries = {query.name: query for query in spark.streams.active}
        assert set(queries) == {"redeploy_serve.landed", "redeploy_serve.served"}

        spark.sql(f"insert into {source} values (4, 'd')")
        for name in ("redeploy_serve.landed", "redeploy_serve.served"):
            queries[name].processAllAvailable()
        rows = sorted(tuple(row) for row in spark.table("redeploy_serve.served").collect())
        assert rows == [(1, "a", "A"), (2, "b", "B"), (3, "c", "C"), (4, "d", "D")]
    finally:
        for query in spark.streams.active:
            query.stop()
