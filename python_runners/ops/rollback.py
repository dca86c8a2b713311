"""`python -m python_runners rollback --select <model>`: the package's `dbt-spark-streaming
rollback` (lifecycle/operation_commands.py), on this repository's project and profiles by default.
"""

from __future__ import annotations

import argparse
from typing import Sequence

from dbt_spark_streaming.lifecycle.operation_commands import rollback_args, rollback_parser


def parser() -> argparse.ArgumentParser:
    return rollback_parser("python -m python_runners rollback")


def dbt_args(argv: Sequence[str]) -> tuple[list[str], str | None]:
    args = parser().parse_args(list(argv))
    command = rollback_args(args)
    return command + (["--profiles-dir", args.profiles_dir] if args.profiles_dir else []), args.project_dir


def main(argv: Sequence[str]) -> int:
    command, project_dir = dbt_args(argv)
    from python_runners.ops.dbt_invocation import run_operation_command

    return run_operation_command(command, project_dir)
