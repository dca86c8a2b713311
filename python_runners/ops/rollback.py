"""`python -m python_runners rollback --select <model>`: the package's `dbt-spark-streaming
rollback` (adapter/dbt_spark_streaming/commands/operations.py) on this repository's project and
profiles."""

from __future__ import annotations

from typing import Sequence

from python_runners.ops import package_command


def main(argv: Sequence[str]) -> int:
    return package_command.run("rollback", argv)
