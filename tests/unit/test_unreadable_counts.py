"""The unreadable lines a model's query read: read from a batch's progress, said on its run line."""

from __future__ import annotations

from dbt_spark_streaming.progress.batch import BatchProgress
from dbt_spark_streaming.progress.table import COLUMNS, progress_row
from dbt_spark_streaming.writes.unreadable_counts import said

PROGRESS = {
    "name": "silver.readings", "id": "q", "runId": "r", "batchId": 3, "numInputRows": 10,
    "durationMs": {"addBatch": 5, "triggerExecution": 9},
    "observedMetrics": {
        "unreadable_lines_0": {"_corrupt_record": 2},
        "unreadable_lines_1": {"_corrupt_record": 1, "bad_line": 4},
        "expectations": {"rows_checked": 10},
    },
}


def test_a_batchs_unreadable_lines_are_summed_by_column_from_its_observed_metrics():
    batch = BatchProgress.from_progress(PROGRESS)
    assert batch.unreadable_lines == {"_corrupt_record": 3, "bad_line": 4}
    assert BatchProgress.from_progress({**PROGRESS, "observedMetrics": {}}).unreadable_lines == {}


def test_the_progress_table_records_them_and_null_for_a_query_that_observes_none():
    columns = [name for name, _kind in COLUMNS]
    assert dict(zip(columns, progress_row(PROGRESS)))["unreadable_lines"] == 7
    assert dict(zip(columns, progress_row({**PROGRESS, "observedMetrics": {}})))["unreadable_lines"] is None


def test_the_run_line_says_whether_the_table_keeps_them():
    assert said({"_corrupt_record": 2}, ["id", "_corrupt_record"]) == ", 2 unreadable lines kept (_corrupt_record set)"
    assert said({"_corrupt_record": 1}, ["id", "v"]) == (
        ", 1 unreadable line in its input (_corrupt_record set) not carried into its table")
    assert said({"_corrupt_record": 0}, ["id"]) == ""
    assert said({}, ["id"]) == ""
