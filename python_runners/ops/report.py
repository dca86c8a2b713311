"""`python -m python_runners report` (`make report`): the package's `dbt-spark-streaming report`
(adapter/dbt_spark_streaming/commands/report.py) on this repository's project and profiles."""

from __future__ import annotations

from typing import Sequence

from python_runners.ops import package_command


def main(argv: Sequence[str]) -> int:
    return package_command.run("report", argv)
