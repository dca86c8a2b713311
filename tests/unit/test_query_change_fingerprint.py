"""What counts as a change of a streaming model's query (no JVM)."""

from __future__ import annotations

import pytest

from python_runners.runtime.errors import StreamingModelError
from python_runners.runtime.query_changes import (
    QueryChangeConfigError, QueryVersion, check, policy_from_config,
)


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
    assert "SQL (- before, + now):" in changed and "+ where kind <> 'b'" in changed


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
