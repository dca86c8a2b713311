"""What the commands that are a dbt run-operation share (reset-checkpoint, rollback): the dbt
options they take, and the dbt command line they become."""

from __future__ import annotations

import argparse
import json
from typing import Any, Mapping


def operation_parser(command: str, description: str) -> argparse.ArgumentParser:
    """`python -m python_runners <command> --select MODEL` with dbt's options; the command adds its own."""
    parser = argparse.ArgumentParser(prog=f"python -m python_runners {command}", description=description)
    parser.add_argument("--select", "-s", required=True, metavar="MODEL", help="the model's name")
    parser.add_argument("--project-dir", help="the dbt project (default: this repository)")
    parser.add_argument("--target", "-t", help="the profile's target")
    parser.add_argument("--vars", help="dbt --vars, as for dbt run")
    return parser


def run_operation(macro: str, arguments: Mapping[str, Any], args: argparse.Namespace) -> tuple[list[str], str | None]:
    """The dbt command line that runs `macro` with `arguments`, and the project folder."""
    command = ["run-operation", macro, "--args", json.dumps(dict(arguments))]
    if args.target:
        command += ["--target", args.target]
    if args.vars:
        command += ["--vars", args.vars]
    return command, args.project_dir
