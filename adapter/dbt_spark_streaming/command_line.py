"""`dbt-spark-streaming`, the installed command: what a dbt project needs beyond `pip install`.

    dbt-spark-streaming init [--project-dir DIR]
    dbt-spark-streaming lint [--project-dir DIR] [--profiles-dir DIR]
    dbt-spark-streaming jars
    dbt-spark-streaming reset-checkpoint --select MODEL --from-now|--from-version N|--from-timestamp T|--from-offsets JSON
    dbt-spark-streaming rollback --select MODEL

`init` writes the root-project macros (ref, source, get_fixture_sql; project_macros/) into the project's
macros/spark_streaming/. dbt takes overrides of ref() and source() from the root project only, so
no package or plugin can ship them; run it again after upgrading the adapter. Files are
rewritten only when they differ. It also writes a starting `.sqlfluff` (lint/sqlfluff.cfg) into a
project that has none. `lint` reports what a streaming
model cannot run (ORDER BY, LIMIT, window functions, DISTINCT aggregates, a config that cannot
work) from its SQL, without Spark (lint/streaming_lint.py); it needs sqlfluff (the `lint` extra).
`jars` fetches Spark's jars ahead of the first session (classpath.py): a CI image's set-up step,
or a cluster target whose metastore's JDBC driver must be there when its first session starts.
`reset-checkpoint` and `rollback` are the dbt run-operations of the same names
(lifecycle/operation_commands.py), with dbt's `--project-dir`, `--profiles-dir`, `--target` and
`--vars`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional

from dbt_spark_streaming.lint import sqlfluff_settings

PROJECT_MACROS = Path(__file__).with_name("project_macros")
MACROS_FOLDER = Path("macros") / "spark_streaming"


def write_project_macros(project_dir: Path) -> list[Path]:
    """The project's copies brought up to date; returns those written."""
    if not (project_dir / "dbt_project.yml").is_file():
        raise SystemExit(f"{project_dir} has no dbt_project.yml: run this in a dbt project's folder "
                         "or give it with --project-dir.")
    target = project_dir / MACROS_FOLDER
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for macro in sorted(PROJECT_MACROS.glob("*.sql")):
        copy = target / macro.name
        text = macro.read_text()
        if not copy.is_file() or copy.read_text() != text:
            copy.write_text(text)
            written.append(copy)
    return written


def fetch_jars() -> list[str]:
    """The jars in the cache, fetched first by a session of their own if it has none."""
    import os
    import tempfile

    from dbt_spark_streaming import classpath

    if classpath.jar_paths():
        return classpath.jar_paths()
    from dbt_spark_streaming.lakehouse import ROOT_VARIABLE, Lakehouse
    from dbt_spark_streaming.metastore import URL_VARIABLE
    from dbt_spark_streaming.session import get_or_create_session

    os.environ.pop(URL_VARIABLE, None)  # embedded Derby: the JDBC driver may be what is missing
    with tempfile.TemporaryDirectory() as scratch:  # a lakehouse for nothing but this start
        get_or_create_session(Lakehouse.from_env({ROOT_VARIABLE: scratch}), master="local[1]").stop()
    return classpath.jar_paths()


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="dbt-spark-streaming", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    init = commands.add_parser("init", help="write the root-project macros into the dbt project")
    init.add_argument("--project-dir", type=Path, default=Path.cwd())
    commands.add_parser("lint", help="what a streaming model cannot run, from its SQL", add_help=False)
    commands.add_parser("jars", help="fetch Spark's jars into the user's cache, if not there yet")
    from dbt_spark_streaming.lifecycle import operation_commands as operations

    commands.add_parser("reset-checkpoint", help=operations.RESET_HELP, add_help=False)
    commands.add_parser("rollback", help=operations.ROLLBACK_HELP, add_help=False)
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["lint"]:
        from dbt_spark_streaming.lint.streaming_lint import main as lint

        return lint(argv[1:])
    if argv[:1] in (["reset-checkpoint"], ["rollback"]):
        return operations.main(argv[0], argv[1:])
    args = parser.parse_args(argv)
    if args.command == "jars":
        jars = fetch_jars()
        print(f"{len(jars)} jars in {Path(jars[0]).parent}")
        return 0
    written = write_project_macros(args.project_dir.resolve())
    where = args.project_dir / MACROS_FOLDER
    print(f"{len(written)} macro file(s) written to {where}" if written else f"{where} is up to date")
    settings = sqlfluff_settings.write_if_missing(args.project_dir)
    if settings is not None:
        print(f"{settings} written: sqlfluff's settings for the models (sparksql, jinja with dbt's builtins)")
    if "serve_streaming_queries" not in (args.project_dir / "dbt_project.yml").read_text():
        print("Models with a processing_time trigger keep running after `dbt run` only with this in "
              "dbt_project.yml:\n  on-run-end:\n    - \"{{ serve_streaming_queries() }}\"")
    return 0


if __name__ == "__main__":
    sys.exit(main())
