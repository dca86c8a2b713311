"""The one parser of a model's streaming reads (runtime/config/stream_reads.py), on every form
the SQL writes them in: as written (dbt's raw code) and compiled."""

from __future__ import annotations

import pytest

from dbt_spark_streaming.config.stream_reads import (
    REF, SOURCE, SOURCE_VIEW, TABLE, StreamRead, is_source_view, replace_reads, source_view_name,
    name_stream_reads, source_input_name, stream_options, stream_reads, table_input_name,
)


def read(sql: str) -> StreamRead:
    reads = stream_reads(sql)
    assert len(reads) == 1, reads
    return reads[0]


def kinds(sql: str) -> list[tuple[str, str]]:
    return [(r.kind, r.relation) for r in stream_reads(sql)]


# Compiled SQL -------------------------------------------------------------------------------


def test_a_stream_of_a_table_is_read_with_its_schema_and_no_options():
    found = read("select id from stream(silver.readings) where id > 0")
    assert (found.kind, found.relation, dict(found.options)) == (TABLE, "silver.readings", {})
    assert found.text == "stream(silver.readings)"
    assert not found.follows_changes and not found.follows_rewrites


def test_a_table_keeps_its_backticks_and_catalog_and_loses_the_spaces_around_it():
    assert read("from STREAM ( `spark_catalog`.`silver`.`readings`  ) r").relation == \
        "`spark_catalog`.`silver`.`readings`"


def test_the_change_data_feed_stream_changes_renders_is_followed():
    found = read("select * from stream(silver.devices) with ('readChangeFeed' = 'true') d")
    assert found.options == {"readChangeFeed": "true"}
    assert found.follows_changes and found.follows_rewrites
    assert found.text == "stream(silver.devices) with ('readChangeFeed' = 'true')"
    assert found.options_text == "'readChangeFeed' = 'true'"


def test_skipping_change_commits_follows_rewrites_not_changes():
    found = read("from stream(silver.devices) with ('skipChangeCommits' = 'true')")
    assert found.follows_rewrites and not found.follows_changes


def test_options_are_told_in_any_case_and_quoting_and_false_is_not_true():
    assert read("from stream(t) WITH (\"READCHANGEFEED\"=\"TRUE\")").follows_changes
    assert read("from stream(t) with (readChangeFeed = true)").follows_changes
    assert not read("from stream(t) with ('readChangeFeed' = 'false')").follows_rewrites


def test_a_reset_s_starting_version_is_one_more_option():
    found = read("from stream(silver.up) with ('readChangeFeed' = 'true', 'startingVersion' = '5')")
    assert found.options == {"readChangeFeed": "true", "startingVersion": "5"}
    assert found.with_options({"startingTimestamp": "2026-01-01 00:00:00.000"}) == (
        "stream(silver.up) with ('readChangeFeed' = 'true', 'startingVersion' = '5', "
        "'startingTimestamp' = '2026-01-01 00:00:00.000')")
    assert read("from stream(silver.up)").with_options({"startingVersion": "3"}) == \
        "stream(silver.up) with ('startingVersion' = '3')"


def test_a_source_view_is_read_by_its_name_in_any_case_and_only_whole():
    sql = ("select * from STREAM_SOURCE__landing__recordings r join batch_source__landing__x b "
           "using (id) join my_stream_source__y using (id) join stream_source__landing__x$ using (id)")
    assert kinds(sql) == [(SOURCE_VIEW, "STREAM_SOURCE__landing__recordings")]
    assert read(sql).options == {} and not read(sql).follows_changes


def test_a_checkpoint_reset_s_own_view_of_a_source_is_a_source_view():
    assert kinds("from `stream_source__landing__x__from_reset__m`") == [
        (SOURCE_VIEW, "stream_source__landing__x__from_reset__m")]


def test_several_reads_are_found_in_order_in_joins_and_subqueries():
    sql = ("select * from (select * from stream(silver.a) where x in (select id from silver.c)) a "
           "join stream(silver.b) with ('readChangeFeed' = 'true') b on a.id = b.id "
           "join (select * from stream_source__landing__events) e using (id) "
           "left join silver.d using (id)")
    assert kinds(sql) == [(TABLE, "silver.a"), (TABLE, "silver.b"), (SOURCE_VIEW, "stream_source__landing__events")]
    assert [r.follows_changes for r in stream_reads(sql)] == [False, True, False]
    assert all(sql[r.start:r.end] == r.text for r in stream_reads(sql))


def test_a_stream_of_a_source_view_is_a_stream_of_a_table():
    assert kinds("from stream(stream_source__landing__x)") == [(TABLE, "stream_source__landing__x")]


def test_batch_reads_and_names_ending_in_stream_are_no_reads():
    assert stream_reads("select stream, upstream(x), stream_changes(t) from readings where streams > 0") == []
    assert stream_reads("") == [] and stream_reads(None) == []


def test_comments_are_not_parsed_a_read_in_one_counts():
    assert kinds("select 1 -- from stream(silver.old)\n") == [(TABLE, "silver.old")]


# As written: dbt's raw code ----------------------------------------------------------------


def test_a_stream_of_a_ref_is_the_model_s_name_however_spaced_and_quoted():
    assert kinds("from stream({{ ref('up') }}) u") == [(REF, "up")]
    assert kinds('from stream( {{ref("up")}} ) u') == [(REF, "up")]
    assert kinds("from stream({{- ref('up') -}}) u") == [(REF, "up")]
    assert read('from stream( {{ref("up")}} ) u').text == 'stream( {{ref("up")}} )'


def test_a_ref_to_another_package_or_version_names_the_model():
    assert kinds("from stream({{ ref('pkg', 'up') }})") == [(REF, "up")]
    assert kinds("from stream({{ ref('up', v=2) }})") == [(REF, "up")]
    assert kinds("from stream({{ ref('up', version=var('v')) }})") == [(REF, "up")]


def test_the_read_macros_carry_their_options():
    changes = read("select * from {{ stream_changes(ref('changing')) }} c")
    assert (changes.kind, changes.relation, changes.options) == (REF, "changing", {"readChangeFeed": "true"})
    assert changes.follows_changes and changes.text == "stream_changes(ref('changing'))"
    appends = read("select * from {{ stream_appends(ref('changing')) }} c")
    assert appends.options == {"skipChangeCommits": "true"}
    assert appends.follows_rewrites and not appends.follows_changes


def test_a_plain_stream_of_a_ref_with_options_has_them():
    found = read("from stream({{ ref('up') }}) with ('readChangeFeed' = 'true') u")
    assert found.options == {"readChangeFeed": "true"} and found.follows_changes


def test_a_stream_of_a_source_is_source_dot_table():
    assert kinds("from stream({{ source('raw', 'events') }}) union all "
                 "select * from {{ stream_changes(source(\"raw\",\"devices\")) }}") == [
        (SOURCE, "raw.events"), (SOURCE, "raw.devices")]


def test_batch_refs_and_sources_are_no_reads():
    assert stream_reads("select * from {{ ref('up') }} join {{ source('raw', 'events') }} using (id)") == []
    assert stream_reads("from stream({{ ref(var('model')) }})") == []


def test_raw_code_mixing_forms_gives_each_read_once():
    sql = ("select * from stream({{ ref('up') }}) u join {{ ref('devices') }} d using (id)\n"
           "union all select * from {{ stream_changes(ref('changing')) }}\n"
           "union all select * from stream({{ source('raw', 'events') }})")
    assert kinds(sql) == [(REF, "up"), (REF, "changing"), (SOURCE, "raw.events")]


# Rewriting and naming ----------------------------------------------------------------------


def test_replacing_reads_keeps_the_rest_and_the_reads_given_none():
    sql = "select * from stream(a.t) with ('readChangeFeed' = 'true') join stream(a.u) join stream_source__s__t"
    assert replace_reads(sql, lambda r: r.relation if r.kind == TABLE else None) == \
        "select * from a.t join a.u join stream_source__s__t"
    assert replace_reads(sql, lambda r: "v" if r.kind == SOURCE_VIEW else None) == \
        "select * from stream(a.t) with ('readChangeFeed' = 'true') join stream(a.u) join v"
    assert replace_reads(sql, lambda r: None) == sql


def test_source_views_are_named_in_one_place():
    assert source_view_name("landing.recordings") == "stream_source__landing__recordings"
    assert source_view_name("landing.recordings", streaming=False) == "batch_source__landing__recordings"
    assert is_source_view("stream_source__landing__recordings")
    assert is_source_view("Stream_Source__landing__recordings")
    assert is_source_view("batch_source__landing__recordings", streaming=False)
    assert not is_source_view("batch_source__landing__recordings")
    assert not is_source_view("stream_source__") and not is_source_view("silver.readings")


@pytest.mark.parametrize("text, options", [
    ("'readChangeFeed' = 'true', \"startingVersion\"=\"3\", skipChangeCommits = true",
     {"readChangeFeed": "true", "startingVersion": "3", "skipChangeCommits": "true"}),
    ("`maxFilesPerTrigger` = 1", {"maxFilesPerTrigger": "1"}),
    ("", {}),
])
def test_options_are_read_whatever_the_quoting(text, options):
    assert stream_options(text) == options


# Names --------------------------------------------------------------------------------------


def test_each_compiled_table_read_gets_the_tables_name_once_and_keeps_one_it_has():
    sql = ("select * from stream(spark_catalog.`dev`.`readings`) with ('skipChangeCommits' = 'true') "
           "join stream(prod.readings) using (id) union all select * from stream(s.other) identified by mine")
    named = name_stream_reads(sql)
    assert [(r.relation, r.source_name) for r in stream_reads(named)] == [
        ("spark_catalog.`dev`.`readings`", "readings"), ("prod.readings", "readings_2"), ("s.other", "mine")]
    assert dict(stream_reads(named)[0].options) == {"skipChangeCommits": "true"}
    assert name_stream_reads(named) == named
    source = "select * from stream(stream_source__landing__recordings)"  # a named stream already
    assert name_stream_reads(source) == "select * from stream_source__landing__recordings"


def test_a_named_read_keeps_its_name_when_options_are_added():
    found = read("select * from stream(silver.readings) identified by readings")
    assert found.with_options({"startingVersion": "3"}) == (
        "stream(silver.readings) with ('startingVersion' = '3') identified by readings")


def test_names_are_what_spark_accepts_for_a_source():
    assert table_input_name("`my-catalog`.`sch`.`my table`") == "my_table"
    assert source_input_name("landing.recordings") == "landing__recordings"
