"""When a served query or run that failed is started again, and when serving gives up: one rule
for the processing-time queries (run/serving.py) and the dataflow's runs (serve/dataflow.py)."""

from __future__ import annotations

from dbt_spark_streaming.errors import StreamingModelError

FIRST_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 60.0
MAX_FAILURES_IN_A_ROW = 5


def pause_after(failures_in_a_row: int, name: str, reason: str, completing: str) -> float:
    """Seconds to wait before starting `name` again (1 s, 2 s, 4 s ... at most 60 s); raises
    once it failed more than MAX_FAILURES_IN_A_ROW times without `completing` ('a batch')."""
    if failures_in_a_row > MAX_FAILURES_IN_A_ROW:
        raise StreamingModelError(
            f"Query {name} failed {failures_in_a_row} times in a row without "
            f"completing {completing}; serving stops. Last error: {reason}. Fix the cause, then "
            f"start the service again: each query resumes from its checkpoint."
        )
    return min(MAX_BACKOFF_SECONDS, FIRST_BACKOFF_SECONDS * 2 ** (failures_in_a_row - 1))
