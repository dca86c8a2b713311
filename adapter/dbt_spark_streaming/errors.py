"""Spark's refusals of streaming queries, retold for the person who wrote the model."""

from __future__ import annotations

import re

_ADVICE = [
    (
        re.compile(r"Sorting is not supported on streaming", re.I),
        "ORDER BY",
        "A stream has no end to sort up to. Sort when you read the table instead; only an "
        "aggregate with output_mode='complete', whose whole result is rewritten each batch, can "
        "be sorted in the model.",
    ),
    (
        re.compile(r"(Append output mode not supported when there are streaming aggregations"
                   r"|STREAMING_OUTPUT_MODE.*append.*aggregation)", re.I | re.S),
        "an aggregation in append mode",
        "Append mode writes each row once and never changes it, so an aggregate over an "
        "unbounded stream can never be final. Use output_mode='complete', or aggregate over "
        "time windows with a watermark so each window is emitted once it is closed.",
    ),
    (
        re.compile(r"(Complete output mode not supported when there are no streaming aggregations"
                   r"|output mode: complete.*no streaming aggregations)", re.I | re.S),
        "output_mode='complete' without an aggregation",
        "Complete mode rewrites the whole result each batch and needs a GROUP BY. Use "
        "output_mode='append' for row-by-row models.",
    ),
    (
        re.compile(r"Multiple streaming aggregations are not supported", re.I),
        "an aggregation over an aggregation",
        "Spark keeps one level of streaming aggregation per query. Split the model in two: the "
        "first writes the inner aggregate, the second reads it with stream(ref(...)) only if it "
        "is append-only, otherwise as a batch read.",
    ),
    (
        re.compile(r"(LIMIT|Limits?) (is|are) not supported on streaming", re.I),
        "LIMIT",
        "A stream has no end to count rows to: a LIMIT counts rows across every run, so once "
        "it is reached every later row is dropped for good. Filter with WHERE, aggregate over "
        "time windows with a watermark, or limit when you read the table (LIMIT is allowed "
        "over an aggregate with output_mode='complete', a top-n recomputed each batch).",
    ),
    (
        re.compile(r"Offset is not supported on streaming", re.I),
        "OFFSET",
        "A stream has no start to skip rows from: an OFFSET counts rows across every run. "
        "Filter with WHERE instead, or skip rows when you read the table.",
    ),
    (
        re.compile(r"Non-time-based windows are not supported|NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING", re.I),
        "a window function (OVER ...)",
        "Spark streams support time windows only: group by window(<timestamp>, '<duration>') "
        "with a watermark, or compute the window function in a batch model.",
    ),
    (
        re.compile(r"Distinct aggregations are not supported", re.I),
        "a DISTINCT aggregation",
        "Use approx_count_distinct(...), or deduplicate in an earlier model keyed on a time "
        "window with a watermark.",
    ),
]


ADVICE = {operation: advice for _, operation, advice in _ADVICE}


def cannot_run(model: str, operation: str) -> str:
    """The explanation for an operation a stream cannot run, as both lint and run time say it."""
    return f"Model {model} uses {operation}, which a streaming query cannot run. {ADVICE[operation]}"


# The query changed in a way its checkpoint (or its table) cannot follow.
_CHECKPOINT_CANNOT_FOLLOW = re.compile(
    r"STATE_STORE_(KEY|VALUE)_SCHEMA_NOT_COMPATIBLE"
    r"|STATE_SCHEMA_FILE_NOT_FOUND|STATE_STORE_INVALID_VALUE_SCHEMA_EVOLUTION"
    r"|STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA"
    r"|STREAMING_STATEFUL_OPERATOR_MISSING_STATE_DIRECTORY"
    r"|Provided schema doesn't match to the schema for existing state"
    r"|DELTA_FAILED_TO_MERGE_FIELDS|DELTA_METADATA_MISMATCH|A schema mismatch detected when writing",
)


def streams_changing_table(model: str, upstream: str = "a table") -> str:
    """A plain stream(ref(...)) of a table whose rows change in place, and the two reads that work."""
    ref = f"ref('{upstream}')" if upstream != "a table" else "ref('<model>')"
    return (
        f"Model {model} reads {upstream} with stream(...), which reads a table's appends only, "
        f"but {upstream}'s rows are updated and deleted in place (a cdc_table, or output_mode "
        f"'update'), so the stream stops at the first such commit. Read its changes: "
        f"`from {{{{ stream_changes({ref}) }}}}` gives every insert, update and delete once, with "
        f"_change_type, _commit_version and _commit_timestamp (Delta's change data feed). Or "
        f"read only what is appended: `from {{{{ stream_appends({ref}) }}}}` (Delta's "
        f"skipChangeCommits: a commit that updates or deletes rows is skipped whole, the rows it "
        f"inserts too)."
    )


# What a `fail` expectation raises inside the batch's write (writes/expectation_checks.py).
EXPECTATION_FAILED = "Expectation failed"
_EXPECTATION_FAILED = re.compile(
    r"\[USER_RAISED_EXCEPTION\] " + EXPECTATION_FAILED
    + r": (?P<name>\w+) \((?P<expression>.*?)\) on a row: (?P<row>\{.*?)(?: SQLSTATE: \w+)?$",
    re.M,
)


def expectation_failed(model: str, text: str) -> str | None:
    """A fail expectation's stop, told with the rule, the row and what the run did not do."""
    found = _EXPECTATION_FAILED.search(text)
    if found is None:
        return None
    return (
        f"Model {model}: expectation {found['name']} ({found['expression']}) has action 'fail' "
        f"and a row breaks it: {found['row']}\nNothing of this batch was written, and the "
        f"checkpoint did not record it. Fix the data upstream, or the rule in the model's "
        f"config (or give it action 'drop', 'quarantine' or 'warn'), then run again: the batch "
        f"is processed again, and no row is lost or written twice."
    )


# A write that breaks a Delta constraint (a contract's not_null or check: delta_constraints.py).
_NOT_NULL_VIOLATED = re.compile(r"NOT NULL constraint violated for column: (?P<column>[^\n]+?)\.(?:\s|$)")
_CHECK_VIOLATED = re.compile(
    r"CHECK constraint (?P<name>\S+) (?P<expression>.+?) violated by row with values:"
    r"(?P<values>(?:\n\s*- [^\n]*)+)"
)
_NOTHING_WRITTEN = "Nothing of this write reached the table; the next run reads the same input again."


def constraint_violated(model: str, text: str) -> str | None:
    """A row the table's NOT NULL or CHECK constraint refused, told with the column or rule and
    the row's values."""
    found = _NOT_NULL_VIOLATED.search(text)
    if found:
        column = found["column"]
        return (
            f"Model {model}: a row has {column} null, but the table's column {column} is NOT "
            f"NULL (a not_null constraint of the model's contract). {_NOTHING_WRITTEN} Keep nulls "
            f"out in the model (where {column} is not null, or coalesce it), or fix the data "
            f"upstream; if nulls are valid, remove not_null from the contract and run `alter "
            f"table <the model's table> alter column {column} drop not null`."
        )
    found = _CHECK_VIOLATED.search(text)
    if found is None:
        return None
    values = [re.sub(r"\s+SQLSTATE: \w+$", "", line.strip()[2:]).replace(" : ", " = ", 1)
              for line in found["values"].strip().splitlines()]
    nulls = ("" if not any(value.endswith("= null") for value in values) else
             " Delta counts a check that is null as broken: write `<column> is null or ...` to let "
             "nulls through.")
    return (
        f"Model {model}: a row breaks the table's check constraint {found['name']} "
        f"{found['expression']} (from the model's contract): {', '.join(values)}. "
        f"{_NOTHING_WRITTEN} Keep such rows out in the model (a where clause, or an expectation "
        f"with action 'drop' or 'quarantine'), or fix the data upstream; if the rule is wrong, "
        f"change its expression in the contract (the next run replaces the constraint).{nulls}"
    )


_NOT_FOUND = re.compile(r"TABLE_OR_VIEW_NOT_FOUND\].*?(?P<name>`[^ ]+`)")


class StreamingError(Exception):
    """Every error raised for the person running the pipeline: its message names the model or
    source, the setting and the fix. The adapter turns it into a dbt error in one place."""


class ConfigError(StreamingError, ValueError):
    """A setting that cannot work, found before anything of the model runs."""


class StreamingModelError(StreamingError, RuntimeError):
    """A streaming query that Spark refused or that failed, explained in the model's terms."""


def error_text(error: BaseException) -> str:
    """Spark's own message: for a raw Py4J error, the Java exception's, not py4j's wrapper."""
    java_exception = getattr(error, "java_exception", None)
    if java_exception is not None:
        try:
            return str(java_exception.toString())
        except Exception:  # the JVM may be gone; fall back to what Python has
            pass
    return str(error)


def causes_text(error: BaseException) -> list[str]:
    """The messages of the Java exception's causes (a batch's error arrives wrapped in the
    query's: FOREACH_BATCH_USER_FUNCTION_ERROR, STREAM_FAILED)."""
    throwable = getattr(error, "_origin", None) or getattr(error, "java_exception", None)
    messages: list[str] = []
    try:
        while throwable is not None and len(messages) < 20:
            messages.append(str(throwable.toString()))
            throwable = throwable.getCause()
    except Exception:  # the JVM may be gone
        pass
    return messages


def root_cause(error: BaseException) -> str:
    """The first line of the innermost cause's message: what went wrong, not the layers that
    passed it on ("Task failed while writing rows" wraps the error the SQL raised)."""
    causes = [error]
    while getattr(causes[-1], "_cause", None) is not None and len(causes) < 20:
        causes.append(causes[-1]._cause)
    for cause in reversed(causes):
        text = error_text(cause).strip()
        if text:
            return text.splitlines()[0]
    return str(error)


def explain_batch_error(model: str, error: BaseException) -> StreamingError:
    """An error a model's foreachBatch function raised (writes/batch_errors.py), as the run reports
    it: the project's own message as raised, Spark's explained as for any query, and anything else
    named with the model (a bug of ours, not the model's)."""
    if isinstance(error, StreamingError):
        return error
    if isinstance(error, Exception) and (
        getattr(error, "_origin", None) is not None or getattr(error, "java_exception", None) is not None
        or type(error).__module__.startswith("pyspark")
    ):
        return explain(model, error)
    return StreamingModelError(
        f"Model {model}: a micro-batch failed in the runner's write step with "
        f"{type(error).__name__}: {error}. The checkpoint did not record the batch, so the next "
        f"run processes it again; what the batch had already committed is not written twice. "
        f"This is a bug of the runner, not of the model: please report it with logs/spark.log."
    )


def explain(model: str, error: BaseException) -> StreamingModelError:
    text = error_text(error)
    first_line = next((line for line in text.splitlines() if line.strip()), text)
    failed = expectation_failed(model, "\n".join([text, *causes_text(error)]))
    if failed:
        return StreamingModelError(failed)
    violated = constraint_violated(model, "\n".join([text, *causes_text(error)]))
    if violated:
        return StreamingModelError(violated)
    if _CHECKPOINT_CANNOT_FOLLOW.search(text):
        return StreamingModelError(
            f"Model {model} changed in a way its checkpoint cannot follow (different grouping "
            f"keys or output columns, or a stateful operation added or removed). The state and "
            f"table kept from earlier runs fit the old query. Rebuild the model from all input "
            f"with `dbt run --full-refresh --select {model}+` (the `+` rebuilds the models that "
            f"stream from it too).\nSpark said: {first_line[:400]}"
        )
    if "DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE" in text:
        return StreamingModelError(
            f"Model {model} streams from a table that was rebuilt (a full refresh, or dropped "
            f"and created again) after this model's checkpoint last read it, so the checkpoint's "
            f"positions belong to the old table. Rebuild this model from the new table with "
            f"`dbt run --full-refresh --select {model}+`; next time, rebuild an upstream model "
            f"with its readers: `dbt run --full-refresh --select <upstream>+`."
        )
    if "DELTA_SOURCE_TABLE_IGNORE_CHANGES" in text or "DELTA_SOURCE_IGNORE_DELETE" in text:
        return StreamingModelError(f"{streams_changing_table(model)}\nDelta said: {first_line[:400]}")
    if "another query with same id is already active" in text:
        return StreamingModelError(
            f"Model {model}: its query runs already, from the same checkpoint, in the warm driver "
            f"this command attached to (the service serves it on a processing-time trigger, or "
            f"another command runs it). The running query keeps the table current; to run the "
            f"model yourself, stop the service first (`dbt-spark-streaming stop`)."
        )
    if "UNNAMED_STREAMING_SOURCES_WITH_ENFORCEMENT" in text:
        return StreamingModelError(
            f"Model {model} streams from an input written in a form that gets no name, and every "
            f"streaming input needs one (its checkpoint keeps its offsets by it). Read upstream "
            f"tables as stream({{{{ ref('<model>') }}}}) or stream({{{{ source('<source>', '<table>') }}}}) "
            f"(optionally `identified by <name>` after it), and files or Kafka through a source "
            f"declared with meta.stream.\nSpark said: {first_line[:400]}"
        )
    if "Queries without streaming sources" in text:
        return StreamingModelError(
            f"Model {model} is a streaming_table but reads no stream. Read at least one input "
            f"as a stream: stream({{{{ ref('<model>') }}}}) or a source declared with meta.stream; "
            f"for a model recomputed from batch reads each run, use materialized='table'."
        )
    missing = _NOT_FOUND.search(text)
    if missing:
        return StreamingModelError(
            f"Model {model} reads {missing['name']}, which does not exist yet. Build what it "
            f"reads first: `dbt run --select +{model}` runs the model and everything upstream "
            f"of it. If {missing['name']} is not a model or a seed, check its name."
        )
    for pattern, operation, _ in _ADVICE:
        if pattern.search(text):
            return StreamingModelError(
                f"{cannot_run(model, operation)}\nSpark said: {first_line[:400]}"
            )
    # The innermost cause says what went wrong; the layers around it (STREAM_FAILED,
    # TASK_WRITE_FAILED, FOREACH_BATCH_USER_FUNCTION_ERROR) only pass it on.
    return StreamingModelError(f"Streaming query of model {model} failed: {innermost_cause(error, first_line)[:1000]}")


def innermost_cause(error: BaseException, default: str) -> str:
    """The first line of the innermost cause, from pyspark's chain or the Java exception's."""
    if getattr(error, "_cause", None) is not None:
        return root_cause(error).strip() or default
    for cause in reversed(causes_text(error)[1:]):
        line = next((line for line in cause.splitlines() if line.strip()), "")
        if line:
            return re.sub(r"^[\w.$]+(?:Exception|Error): ", "", line.strip())
    return default
