"""Counts a batch's write works out itself, kept by query id and batch id for the run line and the
progress table (runtime/progress/batch_notes.py)."""

from dbt_spark_streaming.progress import batch_notes
from dbt_spark_streaming.progress.table import COLUMNS, progress_row


def test_a_note_is_set_once_per_batch_and_summed_over_a_run():
    batch_notes.add("query-a", 0, "cdc_changes_tied", 2)
    batch_notes.add("query-a", 0, "cdc_changes_tied", 2)  # a replayed batch counts once
    batch_notes.add("query-a", 1, "cdc_changes_tied", 1)
    assert batch_notes.total("query-a", [0, 1, 2], "cdc_changes_tied") == 3
    assert batch_notes.of("query-a", 2, "cdc_changes_tied") is None
    assert batch_notes.of(None, 0, "cdc_changes_tied") is None


def test_the_progress_row_carries_a_cdc_batchs_tied_changes_and_null_for_other_models():
    progress = {"id": "query-b", "runId": "run", "batchId": 4, "name": "silver.patients",
                "numInputRows": 3, "durationMs": {"addBatch": 5, "triggerExecution": 9}}
    columns = [column for column, _kind in COLUMNS]
    assert dict(zip(columns, progress_row(progress)))["cdc_changes_tied"] is None
    batch_notes.add("query-b", 4, batch_notes.CDC_CHANGES_TIED, 1)
    assert dict(zip(columns, progress_row(progress)))["cdc_changes_tied"] == 1
