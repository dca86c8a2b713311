"""The installed package's `dbt-spark-streaming` command, on this repository's project and
profiles: what `python -m python_runners service|report|reset-checkpoint|rollback` run."""

from __future__ import annotations

from typing import Sequence

from python_runners import REPO_ROOT

PROFILES_DIR = REPO_ROOT / "profiles"


def run(command: str, argv: Sequence[str]) -> int:
    """`dbt-spark-streaming <command> <argv>` in this process; `argv` may name another project
    or profiles folder (argparse keeps the last one given)."""
    from dbt_spark_streaming.command_line import main

    return main([command, "--project-dir", str(REPO_ROOT), "--profiles-dir", str(PROFILES_DIR), *argv])
