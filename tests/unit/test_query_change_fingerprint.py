"""What counts as a change of a streaming model's query (no JVM)."""

from __future__ import annotations

import pytest

from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.config.query_diff import LINE_WIDTH
from dbt_spark_streaming.config.query_version import QueryChangeConfigError, QueryVersion, policy_from_config
from dbt_spark_streaming.lifecycle.query_changes import NOTE_WIDTH, applied_note, check, history_note


def version(sql: str, **config) -> QueryVersion:
    return QueryVersion.of_node({"compiled_code": sql, "config": {"materialized": "streaming_table", **config}})


OLD = version("select id, kind\nfrom stream(events)", output_mode="append", trigger={"once": True})


def test_layout_comments_and_the_trigger_are_not_changes():
    same = version("-- ids and kinds\nselect  id,\n  kind /* all */ from stream(events)  ",
                   output_mode="append", trigger={"processing_time": "5 seconds"})
    assert same.changes_since(OLD.properties()) is None


def test_a_changed_filter_is_shown_as_a_diff():
    new = version("select id, kind\nfrom stream(events)\nwhere kind <> 'b'", output_mode="append")
    changed = new.changes_since(OLD.properties())
    assert changed == "  SQL (- before, + now):\n  + where kind <> 'b'"
    assert applied_note(changed) == (
        "; query changed since the last run (SQL: + where kind <> 'b'): applied to new rows only")


def test_a_changed_setting_that_shapes_rows_is_named_with_both_values():
    new = version("select id, kind\nfrom stream(events)", output_mode="append",
                  dedupe={"keys": ["id"]})
    assert new.changes_since(OLD.properties()) == '  dedupe: (unset) -> {"keys": ["id"]}'


def test_a_table_with_nothing_recorded_is_not_a_change():
    assert OLD.changes_since({}) is None


def test_fail_stops_and_apply_to_new_rows_says_what_changed():
    new = version("select id from stream(events)")
    with pytest.raises(StreamingModelError, match="Model m: its query changed"):
        check("m", "fail", new, OLD.properties())
    assert "+ select id from stream(events)" in check("m", "apply_to_new_rows", new, OLD.properties())
    assert check("m", "fail", OLD, OLD.properties()) is None


@pytest.mark.parametrize("value, materialized, expected", [
    ("apply", "streaming_table", "use one of 'apply_to_new_rows', 'fail', 'redeploy'"),
    ("redeploy", "cdc_table", "'redeploy' is for streaming_table models"),
])
def test_unknown_or_unavailable_policies_are_refused_naming_the_model(value, materialized, expected):
    with pytest.raises(QueryChangeConfigError, match=f"Model m: on_query_change.*{expected}"):
        policy_from_config("m", value, materialized)
    assert policy_from_config("m", None) == "apply_to_new_rows"


def test_every_policy_of_a_streaming_table_is_accepted():
    for policy in ("apply_to_new_rows", "fail", "redeploy"):
        assert policy_from_config("m", policy, "streaming_table") == policy


def test_redeploy_is_not_stopped_like_fail_and_gets_what_changed():
    new = version("select id from stream(events)")
    assert "+ select id from stream(events)" in check("m", "redeploy", new, OLD.properties())


def test_fail_names_redeploy_as_a_way_forward():
    with pytest.raises(StreamingModelError, match="set on_query_change='redeploy'; or undo the change"):
        check("m", "fail", version("select id from stream(events)"), OLD.properties())


# --- what a changed model says: short, for every kind of change ---------------------------------

RULES = [
    {"name": "heartbeat_plausible", "expression": "heartbeat between 20 and 250", "action": "quarantine"},
    {"name": "device_known", "expression": "device_model is not null", "action": "warn"},
    {"name": "not_from_the_future", "expression": "recorded_at <= current_timestamp()", "action": "drop"},
    {"name": "old_rule", "expression": "kind is not null"},
]
NEW_RULES = [{**RULES[0], "action": "drop"}, RULES[1], RULES[2],
             {"name": "v_positive", "expression": "v > 0", "action": "drop"}]
SQL = "select id, kind\nfrom stream(events)"


def changed_between(before: dict, now: dict, sql: str = SQL, sql_now: str = SQL) -> str:
    return version(sql_now, **now).changes_since(version(sql, **before).properties())


def test_changed_expectations_are_named_added_removed_or_changed_not_listed_whole():
    changed = changed_between({"expectations": RULES}, {"expectations": NEW_RULES})

    assert changed == (
        "  expectations: + v_positive (v > 0, drop); - old_rule; "
        "~ heartbeat_plausible (action 'quarantine' -> 'drop')"
    )
    note = applied_note(changed)
    assert note == (
        "; query changed since the last run (expectations: + v_positive (v > 0, drop); - old_rule; "
        "~ heartbeat_plausible (action 'quarantine' -> 'drop')): applied to new rows only"
    )
    assert "device_known" not in note and "[{" not in note  # the unchanged rules, the JSON lists


def test_expectations_set_or_removed_whole_are_named_rule_by_rule_a_line_each_when_long():
    added = changed_between({}, {"expectations": RULES[:2]})

    assert added.splitlines() == [
        "  expectations:",
        "    + heartbeat_plausible (heartbeat between 20 and 250, quarantine)",
        "    + device_known (device_model is not null, warn)",
    ]
    assert applied_note(added) == (
        "; query changed since the last run (expectations: + heartbeat_plausible (heartbeat "
        "between 20 and 250, quarantine); + device_known (device_model is not null, warn)): "
        "applied to new rows only")
    assert changed_between({"expectations": RULES[2:]}, {}) == (
        "  expectations: - not_from_the_future; - old_rule")


def test_a_changed_watermark_says_its_delay_before_and_now():
    single = changed_between({"watermark": {"column": "at", "delay": "10 minutes"}},
                             {"watermark": {"column": "at", "delay": "5 minutes"}})
    several = changed_between(
        {"watermark": [{"column": "at", "delay": "1 hour"}]},
        {"watermark": [{"column": "at", "delay": "2 hours"}, {"column": "reported_at", "delay": "1 hour"}]},
    )

    assert single == "  watermark: delay '10 minutes' -> '5 minutes'"
    assert several == "  watermark: + reported_at (delay '1 hour'); ~ at (delay '1 hour' -> '2 hours')"


@pytest.mark.parametrize("before, now, said", [
    ({}, {"output_mode": "complete"}, "output_mode: 'append' -> 'complete'"),
    ({"output_mode": "update", "unique_key": "device"},
     {"output_mode": "update", "unique_key": ["device", "window"]}, "unique_key: + window"),
    ({"quarantine_table": "bad"}, {}, "quarantine_table: 'bad' -> (unset)"),
    ({"dedupe": {"keys": ["id"], "within_watermark": True}},
     {"dedupe": {"keys": ["id"], "within_watermark": False}}, "dedupe: within_watermark true -> false"),
])
def test_a_changed_setting_says_what_of_it_changed(before, now, said):
    assert changed_between(before, now) == f"  {said}"


def test_a_setting_changed_with_the_sql_only_reformatted_shows_no_sql():
    reformatted = "select  id,\n  kind\nfrom stream(events)"
    changed = changed_between({}, {"dedupe": {"keys": ["id"]}}, sql_now=reformatted)
    assert "SQL" not in changed


def test_every_kind_of_change_in_one_note_bounded_in_width():
    changed = changed_between(
        {"expectations": RULES, "watermark": {"column": "at", "delay": "10 minutes"}},
        {"expectations": NEW_RULES, "watermark": {"column": "at", "delay": "5 minutes"},
         "output_mode": "complete"},
        sql_now=SQL + "\nwhere kind <> 'b'",
    )

    assert changed.splitlines() == [
        "  expectations: + v_positive (v > 0, drop); - old_rule; "
        "~ heartbeat_plausible (action 'quarantine' -> 'drop')",
        "  output_mode: 'append' -> 'complete'",
        "  watermark: delay '10 minutes' -> '5 minutes'",
        "  SQL (- before, + now):",
        "  + where kind <> 'b'",
    ]
    note = applied_note(changed)
    assert note.startswith("; query changed since the last run (expectations: + v_positive")
    assert note.endswith(" | output_mode: 'append' -> 'complete' | +2 more): applied to new rows only")
    assert len(note) <= NOTE_WIDTH + len("; query changed since the last run (): applied to new rows only")


def test_a_long_sql_change_is_cut_keeping_where_lines_differ_in_sight():
    columns = ", ".join(f"column_number_{i}" for i in range(12))
    before = f"select {columns} from stream(events)"
    now = before.replace("column_number_10,", "column_number_10 * 2 as doubled,")
    many = "\n".join(f"select {i} as c{i}, '{'x' * 150}'" for i in range(20))

    changed = changed_between({}, {}, sql=before, sql_now=now)
    long_diff = changed_between({}, {}, sql_now=many)

    assert "column_number_10 * 2 as doubled" in changed
    for said in (changed, long_diff, history_note(long_diff), applied_note(long_diff)):
        lines = said.splitlines()
        assert max(len(line) for line in lines) <= max(LINE_WIDTH, NOTE_WIDTH + 70), said
    assert long_diff.splitlines()[-1] == "  ... 10 more changed lines"
    assert "(+20 more lines)" in applied_note(long_diff)


def test_fail_shows_the_short_diff_of_each_change():
    new = version("select id from stream(events)", expectations=NEW_RULES)
    with pytest.raises(StreamingModelError) as stopped:
        check("m", "fail", new, version(SQL, expectations=RULES).properties())

    message = str(stopped.value)
    assert ("  expectations: + v_positive (v > 0, drop); - old_rule; ~ heartbeat_plausible "
            "(action 'quarantine' -> 'drop')\n  SQL (- before, + now):\n  - select id, kind\n"
            "  - from stream(events)\n  + select id from stream(events)\nNothing was started.") in message
    assert "[{" not in message
