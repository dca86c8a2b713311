"""dbt unit tests of streaming models: one batch over the given rows (stream(ref()) and streaming
source inputs), and micro-batch scenarios (_batch) through Spark's streaming engine, where a late
row is dropped that one batch keeps, a duplicate is dropped across batches, and a window is
emitted once the watermark passes it. A wrong expectation fails with dbt's diff; a wrong
scenario stops with a clear error."""

from __future__ import annotations

import re
import textwrap

import pytest

from dbt_results import failure_messages, node_results
from streaming_projects import write_streaming_project

SCHEMA = "unit_tested"
SOURCES = """
version: 2
sources:
  - name: landing
    tables:
      - name: events
        meta:
          stream:
            format: json
            path: unit_tested_events
            create_path: true
            schema: id bigint, kind string, ts timestamp
"""
MODELS = {
    "events_once": (
        "{{ config(watermark={'column': 'ts', 'delay': '10 minutes'}, dedupe={'keys': ['id']}) }}\n"
        "select id, kind, ts from {{ source('landing', 'events') }}"
    ),
    "kind_windows": (
        "{{ config(watermark={'column': 'ts', 'delay': '10 minutes'}) }}\n"
        "select window(ts, '5 minutes').start as window_start, kind, count(*) as n\n"
        "from stream({{ ref('events_once') }})\ngroup by window(ts, '5 minutes'), kind"
    ),
    "kind_totals": (
        "{{ config(output_mode='complete') }}\n"
        "select kind, count(*) as n from stream({{ ref('events_once') }}) group by kind"
    ),
}
# Batch 1's 10:30 row moves the watermark to 10:20: the 10:00 window is emitted after batch 1 (not
# the 10:30 one), and the 10:02 row of batch 2 is late.
WINDOWED_ROWS = """
          - {_batch: 1, id: 1, kind: a, ts: '2026-01-01 10:00:00'}
          - {_batch: 1, id: 2, kind: a, ts: '2026-01-01 10:01:00'}
          - {_batch: 1, id: 3, kind: a, ts: '2026-01-01 10:30:00'}
          - {_batch: 2, id: 4, kind: a, ts: '2026-01-01 10:02:00'}"""
UNIT_TESTS = f"""
unit_tests:
  - name: events_once_from_the_source
    model: events_once
    given:
      - input: source('landing', 'events')
        rows:
          - {{id: 1, kind: a, ts: '2026-01-01 10:00:00'}}
    expect:
      rows:
        - {{id: 1, kind: a, ts: '2026-01-01 10:00:00'}}

  - name: kind_totals_in_one_batch
    model: kind_totals
    given:
      - input: ref('events_once')
        rows:
          - {{id: 1, kind: a}}
          - {{id: 2, kind: a}}
          - {{id: 3, kind: b}}
    expect:
      rows:
        - {{kind: a, n: 2}}
        - {{kind: b, n: 1}}

  - name: duplicate_dropped_across_batches
    model: events_once
    given:
      - input: source('landing', 'events')
        rows:
          - {{_batch: 1, id: 1, kind: a, ts: '2026-01-01 10:00:00'}}
          - {{_batch: 2, id: 1, kind: a, ts: '2026-01-01 10:00:00'}}
          - {{_batch: 2, id: 2, kind: b, ts: '2026-01-01 10:01:00'}}
    expect:
      rows:
        - {{_batch: 1, id: 1, kind: a, ts: '2026-01-01 10:00:00'}}
        - {{_batch: 2, id: 1, kind: a, ts: '2026-01-01 10:00:00'}}
        - {{_batch: 2, id: 2, kind: b, ts: '2026-01-01 10:01:00'}}

  - name: window_emitted_and_late_row_dropped
    model: kind_windows
    given:
      - input: ref('events_once')
        rows:{WINDOWED_ROWS}
    expect:
      rows:
        - {{_batch: 1, window_start: '2026-01-01 10:00:00', kind: a, n: 2}}
        - {{_batch: 2, window_start: '2026-01-01 10:00:00', kind: a, n: 2}}

  - name: late_row_kept_in_one_batch
    model: kind_windows
    given:
      - input: ref('events_once')
        rows:{WINDOWED_ROWS.replace("_batch: 1, ", "").replace("_batch: 2, ", "")}
    expect:
      rows:
        - {{window_start: '2026-01-01 10:00:00', kind: a, n: 3}}
        - {{window_start: '2026-01-01 10:30:00', kind: a, n: 1}}

  - name: wrong_count_after_batch_2
    model: kind_windows
    given:
      - input: ref('events_once')
        rows:{WINDOWED_ROWS}
    expect:
      rows:
        - {{_batch: 1, window_start: '2026-01-01 10:00:00', kind: a, n: 2}}
        - {{_batch: 2, window_start: '2026-01-01 10:00:00', kind: a, n: 3}}

  - name: column_the_input_lacks
    model: kind_windows
    given:
      - input: ref('events_once')
        rows:
          - {{_batch: 1, id: 1, kind: a, colour: red, ts: '2026-01-01 10:00:00'}}
    expect:
      rows:
        - {{_batch: 1, window_start: '2026-01-01 10:00:00', kind: a, n: 1}}

  - name: input_not_read
    model: kind_windows
    given:
      - input: ref('events_once')
        rows:
          - {{_batch: 1, id: 1, kind: a, ts: '2026-01-01 10:00:00'}}
      - input: ref('kind_totals')
        rows:
          - {{_batch: 1, kind: a, n: 1}}
    expect:
      rows:
        - {{_batch: 1, window_start: '2026-01-01 10:00:00', kind: a, n: 1}}

  - name: batches_given_but_not_expected
    model: kind_totals
    given:
      - input: ref('events_once')
        rows:
          - {{_batch: 1, id: 1, kind: a}}
    expect:
      rows:
        - {{kind: a, n: 1}}
"""
PASSING = ("events_once_from_the_source", "kind_totals_in_one_batch",
           "duplicate_dropped_across_batches", "window_emitted_and_late_row_dropped",
           "late_row_kept_in_one_batch")


@pytest.fixture(scope="module")
def project(dbt, tmp_path_factory):
    root = write_streaming_project(tmp_path_factory.mktemp("unit_tested"), "unit_tested", SCHEMA,
                                   MODELS, SOURCES + UNIT_TESTS)
    built = dbt("run", project_dir=str(root))  # the unit tests' inputs, for their column types
    assert built.success, failure_messages(built)
    return root


def test_unit_tests_and_scenarios_of_streaming_models_pass(dbt, project, spark):
    result = dbt("test", "--select", *PASSING, project_dir=str(project))

    assert result.success, failure_messages(result)
    unit_tests = {name: r.status for name, r in node_results(result).items() if r.node.resource_type == "unit_test"}
    assert unit_tests == dict.fromkeys(PASSING, "pass")
    # Nothing of the scenarios is left running or kept in the metastore.
    assert not [query for query in spark.streams.active if query.name.startswith("unit_test__")]
    assert not [table for table in spark.catalog.listTables(SCHEMA)
                if any(table.name.startswith(f"unit_test__{name}__") for name in PASSING)]


def test_a_wrong_expectation_fails_with_a_diff_naming_the_batch_and_the_rows(dbt, project):
    result = dbt("test", "--select", "wrong_count_after_batch_2", project_dir=str(project))

    assert not result.success
    outcome = node_results(result)["wrong_count_after_batch_2"]
    assert outcome.status == "fail" and outcome.node.tested_node_unique_id.endswith("kind_windows")
    diff = re.sub(r"\x1b\[[0-9;]*m", "", outcome.message)
    assert "actual differs from expected" in diff and "_batch" in diff and "window_start" in diff
    changed = [line for line in diff.splitlines() if "→" in line]
    assert len(changed) == 1 and changed[0].split(",")[1].strip() == "2" and "3→2" in changed[0]


@pytest.mark.parametrize("test, said", [
    ("column_the_input_lacks", ["Invalid column name: 'colour'", "events_once"]),
    ("input_not_read", ["input_not_read", "kind_windows does not read ref('kind_totals')"]),
    ("batches_given_but_not_expected", ["batches_given_but_not_expected", "events_once",
                                        "Give each expected row a _batch too"]),
])
def test_a_wrong_scenario_stops_with_a_clear_error(dbt, project, test, said):
    result = dbt("test", "--select", test, project_dir=str(project))

    assert not result.success
    message = failure_messages(result)
    assert all(text in message for text in said), message


def test_an_input_the_model_does_not_read_is_refused_naming_it(dbt, tmp_path):
    unknown = textwrap.dedent("""
        unit_tests:
          - name: unknown_input
            model: kind_totals
            given:
              - input: ref('events_twice')
                rows: [{id: 1, kind: a}]
            expect:
              rows: [{kind: a, n: 1}]
    """)
    root = write_streaming_project(tmp_path / "unknown", "unit_unknown", SCHEMA, MODELS, SOURCES + unknown)

    result = dbt("test", "--select", "unknown_input", project_dir=str(root))

    assert not result.success
    message = failure_messages(result)
    assert "events_twice" in message and "unknown_input" in message, message


def test_the_demo_unit_tests_pass(dbt, spark):
    """The repository's own: silver_recordings' cleaning, device_counts, and recording_windows'
    scenario (a duplicate and a late row), over empty input tables (--empty) for their types."""
    assert dbt("seed", "--select", "devices").success
    assert dbt("run", "--empty", "--select", "bronze_recordings", "silver_recordings").success

    result = dbt("test", "--select", "test_type:unit")

    assert result.success, failure_messages(result)
    unit_tests = {name: r.status for name, r in node_results(result).items() if r.node.resource_type == "unit_test"}
    assert unit_tests == {
        "silver_recordings_cleaning": "pass", "device_counts_per_device": "pass",
        "recording_windows_drop_duplicates_and_late_rows": "pass",
    }
