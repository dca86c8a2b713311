"""Spark's refusals retold for the person who wrote the model (adapter/dbt_spark_streaming/errors.py),
from Spark's message text: the model, what it did, and the fix."""

from __future__ import annotations

import pytest

from dbt_spark_streaming.errors import ADVICE, StreamingModelError, cannot_run, error_text, explain, root_cause

MODEL = "device_counts"


def explained(text: str) -> str:
    error = explain(MODEL, Exception(text))
    assert isinstance(error, StreamingModelError)
    return str(error)


@pytest.mark.parametrize("operation", sorted(ADVICE))
def test_cannot_run_names_the_model_the_operation_and_the_advice(operation):
    assert cannot_run(MODEL, operation) == (
        f"Model {MODEL} uses {operation}, which a streaming query cannot run. {ADVICE[operation]}"
    )


@pytest.mark.parametrize("spark_says, operation, fix", [
    ("Sorting is not supported on streaming DataFrames/Datasets, unless it is on aggregated "
     "DataFrame/Dataset in Complete output mode", "ORDER BY", "Sort when you read the table instead"),
    ("Append output mode not supported when there are streaming aggregations on streaming "
     "DataFrames/DataSets without watermark", "an aggregation in append mode", "Use output_mode='complete'"),
    ("[STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION] Invalid streaming output mode: append.\nThis output "
     "mode is not supported for streaming aggregations without watermark", "an aggregation in append mode",
     "aggregate over time windows with a watermark"),
    ("Complete output mode not supported when there are no streaming aggregations on streaming "
     "DataFrames/Datasets", "output_mode='complete' without an aggregation", "Use output_mode='append'"),
    ("Multiple streaming aggregations are not supported with streaming DataFrames/Datasets",
     "an aggregation over an aggregation", "Split the model in two"),
    ("Limits are not supported on streaming DataFrames/Datasets", "LIMIT", "Filter with WHERE"),
    ("Offset is not supported on streaming DataFrames/Datasets", "OFFSET", "Filter with WHERE instead"),
    ("[NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING] Window function is not supported on streaming",
     "a window function (OVER ...)", "group by window(<timestamp>, '<duration>')"),
    ("Non-time-based windows are not supported on streaming DataFrames/Datasets",
     "a window function (OVER ...)", "compute the window function in a batch model"),
    ("Distinct aggregations are not supported on streaming DataFrames/Datasets",
     "a DISTINCT aggregation", "approx_count_distinct"),
])
def test_an_operation_a_stream_cannot_run_gets_its_advice_and_sparks_words(spark_says, operation, fix):
    message = explained(f"\n{spark_says}\n\tat org.apache.spark.sql.Plan(Plan.scala:1)")
    first_line = spark_says.splitlines()[0]
    assert message == f"{cannot_run(MODEL, operation)}\nSpark said: {first_line}"
    assert fix in message


def test_the_order_by_advice_fits_a_model_that_already_aggregates_watermarked_windows():
    """Windows and a watermark do not let a stream sort (only complete mode does), so the advice
    never sends a model that has both to add them."""
    advice = ADVICE["ORDER BY"]
    assert "window(" not in advice and "watermark" not in advice
    assert "Sort when you read the table instead" in advice and "output_mode='complete'" in advice


@pytest.mark.parametrize("code", [
    "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE", "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE",
    "STATE_SCHEMA_FILE_NOT_FOUND", "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA",
    "DELTA_METADATA_MISMATCH", "DELTA_FAILED_TO_MERGE_FIELDS",
])
def test_a_change_the_checkpoint_cannot_follow_offers_a_full_refresh_with_the_readers(code):
    message = explained(f"[{code}] something about the state " + "x" * 1000)
    assert message.startswith(f"Model {MODEL} changed in a way its checkpoint cannot follow")
    assert f"`dbt run --full-refresh --select {MODEL}+`" in message
    assert "the `+` rebuilds the models that stream from it too" in message
    spark_said = message.split("\nSpark said: ")[1]
    assert spark_said.startswith(f"[{code}]") and len(spark_said) == 400


def test_a_rebuilt_upstream_table_says_to_rebuild_this_model_and_next_time_the_readers():
    message = explained("[DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE] The streaming query was reading "
                        "from an unexpected Delta table (id = 'a'). It used to read from another (id = 'b')")
    assert f"Model {MODEL} streams from a table that was rebuilt" in message
    assert f"`dbt run --full-refresh --select {MODEL}+`" in message
    assert "`dbt run --full-refresh --select <upstream>+`" in message


def test_a_streaming_table_without_a_stream_says_how_to_read_one():
    message = explained("Queries without streaming sources cannot be executed with writeStream.start()")
    assert message == (
        f"Model {MODEL} is a streaming_table but reads no stream. Read at least one input as a stream: "
        "stream({{ ref('<model>') }}) or a source declared with meta.stream; for a model recomputed "
        "from batch reads each run, use materialized='table'."
    )


def test_a_missing_input_says_what_to_build_first():
    message = explained("[TABLE_OR_VIEW_NOT_FOUND] The table or view `spark_catalog`.`silver`.`readings` "
                        "cannot be found. Verify the spelling")
    name = "`spark_catalog`.`silver`.`readings`"
    assert message == (
        f"Model {MODEL} reads {name}, which does not exist yet. Build what it reads first: "
        f"`dbt run --select +{MODEL}` runs the model and everything upstream of it. "
        f"If {name} is not a model or a seed, check its name."
    )


def test_any_other_failure_names_the_model_and_sparks_first_line():
    assert explained("\n\nboom: the disk is full\nat line 2") == f"Streaming query of model {MODEL} failed: boom: the disk is full"
    assert len(explained("y" * 5000)) == len(f"Streaming query of model {MODEL} failed: ") + 1000


class JavaException:
    def __init__(self, text: str | None):
        self.text = text

    def toString(self):
        if self.text is None:
            raise ConnectionError("the JVM is gone")
        return self.text


def py4j_error(python_text: str, java_text: str | None) -> Exception:
    error = Exception(python_text)
    error.java_exception = JavaException(java_text)
    return error


def test_error_text_is_the_java_exceptions_and_pythons_when_the_jvm_is_gone():
    assert error_text(py4j_error("An error occurred while calling o42.start", "java.lang.X: real")) == (
        "java.lang.X: real"
    )
    assert error_text(py4j_error("An error occurred while calling o42.start", None)) == (
        "An error occurred while calling o42.start"
    )
    assert error_text(ValueError("plain")) == "plain"


def test_explain_reads_the_java_exception_behind_a_py4j_error():
    error = py4j_error("An error occurred while calling o42.start", "org.X: Offset is not supported on streaming")
    assert str(explain(MODEL, error)).startswith(cannot_run(MODEL, "OFFSET"))


def caused(text: str, cause: Exception | None = None) -> Exception:
    error = Exception(text)
    error._cause = cause  # as pyspark's CapturedException keeps the Java cause
    return error


def test_root_cause_is_the_first_line_of_the_innermost_message():
    error = caused("Task failed while writing rows", caused("Job aborted", caused("[DIVIDE_BY_ZERO] x / 0\nat ...")))
    assert root_cause(error) == "[DIVIDE_BY_ZERO] x / 0"


def test_root_cause_skips_causes_without_a_message():
    assert root_cause(caused("Task failed while writing rows", caused("  "))) == "Task failed while writing rows"
    assert root_cause(ValueError("")) == ""


def test_root_cause_of_a_cause_cycle_still_answers():
    error = caused("outer")
    error._cause = error
    assert root_cause(error) == "outer"


def test_an_error_raised_inside_a_batch_is_reported_as_raised_or_named_with_the_model():
    from dbt_spark_streaming.errors import StreamingError, explain_batch_error

    own = StreamingModelError("Model m: 2 change row(s) in this batch have a null key (k)")
    assert explain_batch_error(MODEL, own) is own
    bug = explain_batch_error(MODEL, KeyError("seq"))
    assert isinstance(bug, StreamingError)
    assert str(bug).startswith(f"Model {MODEL}: a micro-batch failed in the runner's write step with KeyError")


def test_a_batch_error_is_kept_by_checkpoint_and_taken_once():
    from dbt_spark_streaming.writes import batch_errors

    def failing(batch, batch_id):
        raise ValueError(f"batch {batch_id}")

    with pytest.raises(ValueError):
        batch_errors.kept_for("/checkpoints/m", failing)(None, 3)
    assert str(batch_errors.take("/checkpoints/m")) == "batch 3"
    assert batch_errors.take("/checkpoints/m") is None


def test_an_unknown_failure_is_told_by_its_innermost_cause_not_the_wrappers():
    inner = Exception("[USER_RAISED_EXCEPTION] injected failure SQLSTATE: P0001")
    outer = Exception("[TASK_WRITE_FAILED] Task failed while writing rows to file:/t.")
    outer._cause = inner
    assert explain(MODEL, outer).args[0] == (
        f"Streaming query of model {MODEL} failed: [USER_RAISED_EXCEPTION] injected failure SQLSTATE: P0001"
    )
