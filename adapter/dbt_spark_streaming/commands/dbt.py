"""dbt run in this process, with the user's dbt options: the adapter's Spark session and the
run's streaming queries are this process's, so that a command can serve them after the run."""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional, Sequence

from dbt_spark_streaming.commands.project import DbtOptions

DBT_DEFAULTS = DbtOptions()  # dbt's own: this folder's project, its profiles


def invoke(args: Sequence[str], options: DbtOptions = DBT_DEFAULTS,
           callbacks: Optional[Sequence[Callable[[Any], None]]] = None) -> Any:
    """dbt's result (dbtRunnerResult) of `dbt <args>` with the options; `callbacks` hear each
    of dbt's events (e.g. NodeStart), in the thread that fires it. `--vars` in `args` win over
    the options' own."""
    from dbt.cli.main import dbtRunner

    full_args = [*args, *options.as_dbt_args()]
    if options.vars and "--vars" not in args:
        full_args += ["--vars", options.vars]
    return dbtRunner(callbacks=list(callbacks or [])).invoke(full_args)


def describe_failure(result: Any, fallback: str = "see the log above") -> str:
    """Why a dbt command failed: its exception, or each failed node's (or operation's) message."""
    if result.exception is not None:
        return str(result.exception)
    outcome = getattr(result.result, "results", None)
    messages = []
    for r in (result.result or []) if outcome is None else outcome:
        node = getattr(r, "node", None)  # a run's results have one; a run-operation's do not
        if not getattr(r, "message", None) or (node is not None and r.status not in ("error", "fail")):
            continue
        messages.append(f"{node.name}: {r.message}" if node is not None else str(r.message))
    return "; ".join(messages) or fallback


def invoke_operation(args: Sequence[str], options: DbtOptions = DBT_DEFAULTS) -> int:
    """A run-operation: 0, or 1 with its failure said on stderr (dbt has printed an error
    raised inside the operation already)."""
    result = invoke(args, options)
    if result.success:
        return 0
    failure = describe_failure(result, fallback="")
    if failure:
        print(failure, file=sys.stderr)
    return 1
