"""When a served query or run that failed is started again, and when a model is set aside: one
rule for the processing-time queries (run/serving.py) and the dataflow's runs (serve/dataflow.py).

A failure is retried after 1 s, 2 s, 4 s ... (at most 60 s). A model that fails
MAX_FAILURES_IN_A_ROW times in a row, with nothing completed in between, is set aside: the other
models keep serving, and it is tried again every SET_ASIDE_RETRY_SECONDS until it completes a
batch (a fix that lands, or an upstream that recovers, needs no restart of the service).
"""

from __future__ import annotations

FIRST_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 60.0
MAX_FAILURES_IN_A_ROW = 5
SET_ASIDE_RETRY_SECONDS = 300.0


def set_aside(failures_in_a_row: int) -> bool:
    return failures_in_a_row >= MAX_FAILURES_IN_A_ROW


def pause_after(failures_in_a_row: int) -> float:
    """Seconds to wait before starting a failed query or run again."""
    if set_aside(failures_in_a_row):
        return SET_ASIDE_RETRY_SECONDS
    return min(MAX_BACKOFF_SECONDS, FIRST_BACKOFF_SECONDS * 2 ** (failures_in_a_row - 1))


def failure_said(name: str, reason: str, failures_in_a_row: int, again: str, completing: str) -> str:
    """The line the service logs for a failure: its retry, or that the model is set aside.
    `again`: 'Restarting it' or 'Running it again'; `completing`: 'a batch' or 'a run'."""
    pause = pause_after(failures_in_a_row)
    if not set_aside(failures_in_a_row):
        return (f"Query {name} failed: {reason}. {again} from its checkpoint in {pause:g} s (failure "
                f"{failures_in_a_row} of {MAX_FAILURES_IN_A_ROW} in a row before it is set aside).")
    return (f"Query {name} failed {failures_in_a_row} times in a row without completing {completing}, "
            f"and is set aside: the other models keep serving, and the models that read its table "
            f"wait for it. Last error: {reason}. Fix the cause: it is tried again every "
            f"{pause:g} s, and the service need not restart.")


def set_aside_state(failures_in_a_row: int, retry_in: float) -> str:
    """What `dbt-spark-streaming status` says of a model set aside."""
    return f"FAILED {failures_in_a_row} times in a row, set aside; tried again in {max(0.0, retry_in):.0f} s"
