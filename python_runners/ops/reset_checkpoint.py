"""`python -m python_runners reset-checkpoint --select <model> --from-now | --from-version N |
--from-timestamp T | --from-offsets JSON`: reset one streaming model's checkpoint, keep its table.

Runs `dbt run-operation reset_checkpoint` (adapter macro reset_checkpoint.sql) in this process,
so the model, its checkpoint and its inputs come from the dbt project as `dbt run` sees them.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from python_runners.ops.operation_command import operation_parser, run_operation

from dbt_spark_streaming.lifecycle.checkpoint_reset import CheckpointResetError, StartingPoint


def parser() -> argparse.ArgumentParser:
    parser = operation_parser(
        "reset-checkpoint", "Delete one streaming model's checkpoint and keep its table; its next "
                            "dbt run reads its inputs from the point given here.",
    )
    start = parser.add_mutually_exclusive_group(required=True)
    start.add_argument("--from-now", action="store_true",
                       help="read only input that arrives after the reset")
    start.add_argument("--from-version", metavar="N",
                       help="the first version of the model's one Delta input to read (inclusive)")
    start.add_argument("--from-timestamp", metavar="T",
                       help="input from T on: '2026-01-31 12:00:00' (UTC) or ISO 8601 with a zone")
    start.add_argument("--from-offsets", metavar="JSON",
                       help='Kafka startingOffsets, e.g. \'{"readings": {"0": 1200}}\'')
    return parser


def dbt_args(argv: Sequence[str]) -> tuple[list[str], str | None]:
    """The dbt command line for the reset, and the project folder; a mistake raises SystemExit
    (argparse) or CheckpointResetError, before dbt or Spark start."""
    args = parser().parse_args(list(argv))
    arguments = {"select": args.select}
    if args.from_now:
        arguments["from_now"] = True
    elif args.from_version is not None:
        arguments["from_version"] = args.from_version
    elif args.from_timestamp is not None:
        arguments["from_timestamp"] = args.from_timestamp
    else:
        arguments["from_offsets"] = args.from_offsets
    StartingPoint.from_args(args.select, arguments)  # the same check the macro makes, early
    if "from_version" in arguments:
        arguments["from_version"] = int(arguments["from_version"])
    return run_operation("reset_checkpoint", arguments, args)


def main(argv: Sequence[str]) -> int:
    try:
        command, project_dir = dbt_args(argv)
    except CheckpointResetError as error:
        print(error, file=sys.stderr)
        return 2
    from python_runners.ops.dbt_invocation import run_operation_command

    return run_operation_command(command, project_dir)
