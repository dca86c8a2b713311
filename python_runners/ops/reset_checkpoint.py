"""`python -m python_runners reset-checkpoint --select <model> --from-now | --from-version N |
--from-timestamp T | --from-offsets JSON`: the package's `dbt-spark-streaming reset-checkpoint`
(lifecycle/operation_commands.py), on this repository's project and profiles by default.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from dbt_spark_streaming.lifecycle.reset.checkpoint_reset import CheckpointResetError
from dbt_spark_streaming.lifecycle.operation_commands import reset_checkpoint_args, reset_checkpoint_parser


def parser() -> argparse.ArgumentParser:
    return reset_checkpoint_parser("python -m python_runners reset-checkpoint")


def dbt_args(argv: Sequence[str]) -> tuple[list[str], str | None]:
    """The dbt command line for the reset, and the project folder; a mistake raises SystemExit
    (argparse) or CheckpointResetError, before dbt or Spark start."""
    args = parser().parse_args(list(argv))
    command = reset_checkpoint_args(args)
    return command + (["--profiles-dir", args.profiles_dir] if args.profiles_dir else []), args.project_dir


def main(argv: Sequence[str]) -> int:
    try:
        command, project_dir = dbt_args(argv)
    except CheckpointResetError as error:
        print(error, file=sys.stderr)
        return 2
    from python_runners.ops.dbt_invocation import run_operation_command

    return run_operation_command(command, project_dir)
