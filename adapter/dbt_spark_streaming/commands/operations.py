"""`dbt-spark-streaming reset-checkpoint` and `dbt-spark-streaming rollback`: the dbt
run-operations a user runs by hand, as commands with dbt's own options.

    dbt-spark-streaming reset-checkpoint --select MODEL --from-now|--from-version N|--from-timestamp T|--from-offsets JSON
    dbt-spark-streaming rollback --select MODEL
    dbt-spark-streaming maintain [--select MODEL ...]

Each becomes `dbt run-operation reset_checkpoint|rollback_redeploy|maintain_tables --args ...` (the adapter's
macros), run in this process from the dbt project's folder, so that the model, its checkpoint
and its inputs are what `dbt run` sees; `--project-dir`, `--profiles-dir`, `--target` and
`--vars` are dbt's. A mistake in the arguments stops the command before dbt or Spark start.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Mapping, Sequence

from dbt_spark_streaming.commands.dbt import invoke_operation
from dbt_spark_streaming.commands.project import DbtOptions, add_dbt_options
from dbt_spark_streaming.lifecycle.reset.reset_arguments import CheckpointResetError, StartingPoint

COMMAND = "dbt-spark-streaming"
RESET_HELP = "delete one streaming model's checkpoint, keep its table; its next run starts where you say"
ROLLBACK_HELP = "put a streaming_table model back as before its last redeploy"
MAINTAIN_HELP = "compact the streaming models' small files and VACUUM what no version in use needs"


def operation_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """`<prog> --select MODEL` with dbt's options; the command adds its own."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--select", "-s", required=True, metavar="MODEL", help="the model's name")
    add_dbt_options(parser)
    return parser


def reset_checkpoint_parser(prog: str = f"{COMMAND} reset-checkpoint") -> argparse.ArgumentParser:
    parser = operation_parser(prog, "Delete one streaming model's checkpoint and keep its table; its "
                                    "next dbt run reads its inputs from the point given here.")
    start = parser.add_mutually_exclusive_group(required=True)
    start.add_argument("--from-now", action="store_true", help="read only input that arrives after the reset")
    start.add_argument("--from-version", metavar="N",
                       help="the first version of the model's one Delta input to read (inclusive)")
    start.add_argument("--from-timestamp", metavar="T",
                       help="input from T on: '2026-01-31 12:00:00' (UTC) or ISO 8601 with a zone")
    start.add_argument("--from-offsets", metavar="JSON",
                       help='Kafka startingOffsets, e.g. \'{"readings": {"0": 1200}}\'')
    return parser


def rollback_parser(prog: str = f"{COMMAND} rollback") -> argparse.ArgumentParser:
    return operation_parser(prog, "Restore a streaming_table model's table and checkpoint to before "
                                  "its last redeploy (on_query_change: redeploy), within its rollback_window.")


def maintain_parser(prog: str = f"{COMMAND} maintain") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Compact each streaming model's small files (Delta OPTIMIZE) and "
        "VACUUM the files no version in use needs, keeping what a rollback inside rollback_window "
        "or a stream not yet caught up still reads. What the service does while serving, for "
        "projects run by `dbt run`.")
    parser.add_argument("--select", "-s", nargs="+", metavar="MODEL", default=[],
                        help="only these models (default: every streaming model)")
    add_dbt_options(parser)
    return parser


def reset_checkpoint_args(args: argparse.Namespace) -> list[str]:
    """The dbt command line of a reset; a starting point that cannot work raises
    CheckpointResetError (the check the macro makes, early)."""
    arguments: dict[str, Any] = {"select": args.select}
    if args.from_now:
        arguments["from_now"] = True
    elif args.from_version is not None:
        arguments["from_version"] = args.from_version
    elif args.from_timestamp is not None:
        arguments["from_timestamp"] = args.from_timestamp
    else:
        arguments["from_offsets"] = args.from_offsets
    StartingPoint.from_args(args.select, arguments)
    if "from_version" in arguments:
        arguments["from_version"] = int(arguments["from_version"])
    return run_operation_args("reset_checkpoint", arguments, args)


def rollback_args(args: argparse.Namespace) -> list[str]:
    return run_operation_args("rollback_redeploy", {"select": args.select}, args)


def maintain_args(args: argparse.Namespace) -> list[str]:
    return run_operation_args("maintain_tables", {"select": args.select}, args)


def run_operation_args(macro: str, arguments: Mapping[str, Any], args: argparse.Namespace) -> list[str]:
    """`run-operation <macro> --args <json>` with the run's --target and --vars."""
    command = ["run-operation", macro, "--args", json.dumps(dict(arguments))]
    if args.target:
        command += ["--target", args.target]
    if args.vars:
        command += ["--vars", args.vars]
    return command


def dbt_command(command: str, argv: Sequence[str]) -> list[str]:
    """The dbt command line of `dbt-spark-streaming <command> <argv>`; a mistake raises
    SystemExit (argparse) or CheckpointResetError, before dbt or Spark start."""
    if command == "reset-checkpoint":
        args = reset_checkpoint_parser().parse_args(list(argv))
        operation = reset_checkpoint_args(args)
    elif command == "maintain":
        args = maintain_parser().parse_args(list(argv))
        operation = maintain_args(args)
    else:
        args = rollback_parser().parse_args(list(argv))
        operation = rollback_args(args)
    return operation + DbtOptions(args.project_dir, args.profiles_dir).as_dbt_args()


def main(command: str, argv: Sequence[str]) -> int:
    """`dbt-spark-streaming <command> ...`: the operation's exit status; why it failed on stderr."""
    try:
        operation = dbt_command(command, argv)
    except CheckpointResetError as error:
        print(error, file=sys.stderr)
        return 2
    return invoke_operation(operation)
