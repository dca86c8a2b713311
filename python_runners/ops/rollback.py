"""`python -m python_runners rollback --select <model>`: put a streaming_table model back as it
was before its last redeploy (its table's version before the swap, its old checkpoint).

Runs `dbt run-operation rollback_redeploy` (adapter macro rollback_redeploy.sql) in this process,
so the model, its table and its checkpoint come from the dbt project as `dbt run` sees them.
"""

from __future__ import annotations

import argparse
from typing import Sequence

from python_runners.ops.operation_command import operation_parser, run_operation


def parser() -> argparse.ArgumentParser:
    return operation_parser(
        "rollback", "Restore a streaming_table model's table and checkpoint to before its last "
                    "redeploy (on_query_change: redeploy), within its rollback_window.",
    )


def dbt_args(argv: Sequence[str]) -> tuple[list[str], str | None]:
    args = parser().parse_args(list(argv))
    return run_operation("rollback_redeploy", {"select": args.select}, args)


def main(argv: Sequence[str]) -> int:
    command, project_dir = dbt_args(argv)
    from python_runners.ops.dbt_invocation import run_operation_command

    return run_operation_command(command, project_dir)
