"""`python -m python_runners service start|status|stop`: the package's `dbt-spark-streaming
serve|status|stop` (adapter/dbt_spark_streaming/commands/service.py) on this repository's
project and profiles, as `make serve`, `make status` and `make stop` run them.

    python -m python_runners service start [--trigger on_new_data | '500 milliseconds'] [--select ...]
    python -m python_runners service status
    python -m python_runners service stop
"""

from __future__ import annotations

import argparse

from python_runners.ops import package_command

ACTIONS = {"start": "serve", "status": "status", "stop": "stop"}


def add_commands(commands: argparse._SubParsersAction) -> None:
    service = commands.add_parser("service", help="run every streaming model always-on; status; stop")
    service.add_argument("action", choices=list(ACTIONS),
                         help="start: `dbt-spark-streaming serve`; status; stop (see their --help)")
    service.add_argument("options", nargs=argparse.REMAINDER, help="the package command's options")


def main(args: argparse.Namespace) -> int:
    return package_command.run(ACTIONS[args.action], args.options)
