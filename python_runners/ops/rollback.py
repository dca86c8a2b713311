"""`python -m python_runners rollback --select <model>`: put a streaming_table model back as it
was before its last redeploy (its table's version before the swap, its old checkpoint).

Runs `dbt run-operation rollback_redeploy` (adapter macro rollback_redeploy.sql) in this process,
so the model, its table and its checkpoint come from the dbt project as `dbt run` sees them.
"""

from __future__ import annotations

import argparse
import json
from typing import Sequence


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m python_runners rollback",
        description="Restore a streaming_table model's table and checkpoint to before its last "
                    "redeploy (on_query_change: redeploy), within its rollback_window.",
    )
    parser.add_argument("--select", "-s", required=True, metavar="MODEL", help="the model's name")
    parser.add_argument("--project-dir", help="the dbt project (default: this repository)")
    parser.add_argument("--target", "-t", help="the profile's target")
    parser.add_argument("--vars", help="dbt --vars, as for dbt run")
    return parser


def dbt_args(argv: Sequence[str]) -> tuple[list[str], str | None]:
    args = parser().parse_args(list(argv))
    command = ["run-operation", "rollback_redeploy", "--args", json.dumps({"select": args.select})]
    if args.target:
        command += ["--target", args.target]
    if args.vars:
        command += ["--vars", args.vars]
    return command, args.project_dir


def main(argv: Sequence[str]) -> int:
    command, project_dir = dbt_args(argv)
    from python_runners.ops.dbt_invocation import run_operation_command

    return run_operation_command(command, project_dir)
