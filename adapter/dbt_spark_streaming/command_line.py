"""`dbt-spark-streaming`, the installed command: every operation of the product, run from a dbt
project's folder (or given --project-dir), with dbt's --profiles-dir, --target and --vars.

    dbt-spark-streaming init [--project-dir DIR]
    dbt-spark-streaming lint [--project-dir DIR] [--profiles-dir DIR]
    dbt-spark-streaming jars
    dbt-spark-streaming serve [--trigger on_new_data|'<interval>'] [--select ...]
    dbt-spark-streaming status
    dbt-spark-streaming stop
    dbt-spark-streaming report [--since-hours H]
    dbt-spark-streaming reset-checkpoint --select MODEL --from-now|--from-version N|--from-timestamp T|--from-offsets JSON
    dbt-spark-streaming rollback --select MODEL
    dbt-spark-streaming maintain [--select MODEL ...]
    dbt-spark-streaming driver start|status|stop [--idle-minutes M]

`init` writes the root-project macros (ref, source, get_fixture_sql; project_macros/) into the
project's macros/spark_streaming/. dbt takes overrides of ref() and source() from the root
project only, so no package or plugin can ship them; run it again after upgrading the adapter.
Files are rewritten only when they differ. It also writes a starting `.sqlfluff`
(lint/sqlfluff.cfg) into a project that has none. `lint` reports what a streaming model cannot
run (ORDER BY, LIMIT, window functions, DISTINCT aggregates, a config that cannot work) from its
SQL, without Spark (lint/streaming_lint.py); it needs sqlfluff (the `lint` extra). `jars`
fetches Spark's jars ahead of the first session (classpath.py): a CI image's set-up step, or a
cluster target whose metastore's JDBC driver must be there when its first session starts.

The product's operations live in commands/: `serve` catches every streaming model up and serves
it until `stop` (commands/service.py); `status` and `stop` find the service through the profile
target's lakehouse without starting Spark; `report` charts the progress table (commands/report.py,
the `report` extra); `reset-checkpoint`, `rollback` and `maintain` are dbt run-operations
(commands/operations.py); `driver` keeps a warm Spark driver that dbt commands attach to
(commands/driver.py).
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
    """The jars in the cache, fetched first by a session of their own if it has none; then the
    S3A connector's (a lakehouse on s3a://), fetched once as well."""
    from dbt_spark_streaming import classpath

    return _fetch_core_jars() + classpath.fetch_s3a_jars()


def _fetch_core_jars() -> list[str]:
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
    parser = argparse.ArgumentParser(prog="dbt-spark-streaming", description=" ".join(__doc__.split("\n\n")[0].split()))
    commands = parser.add_subparsers(dest="command", required=True)
    init = commands.add_parser("init", help="write the root-project macros into the dbt project")
    init.add_argument("--project-dir", type=Path, default=Path.cwd())
    commands.add_parser("lint", help="what a streaming model cannot run, from its SQL", add_help=False)
    commands.add_parser("jars", help="fetch Spark's jars into the user's cache, if not there yet")
    from dbt_spark_streaming.commands import driver, operations, report, service

    for name, help in (("serve", service.SERVE_HELP), ("status", service.STATUS_HELP), ("stop", service.STOP_HELP),
                       ("report", report.HELP), ("reset-checkpoint", operations.RESET_HELP),
                       ("rollback", operations.ROLLBACK_HELP), ("maintain", operations.MAINTAIN_HELP),
                       ("driver", driver.HELP)):
        commands.add_parser(name, help=help, add_help=False)  # each parses its own options
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["lint"]:
        from dbt_spark_streaming.lint.streaming_lint import main as lint

        return lint(argv[1:])
    if argv[:1] in (["serve"], ["status"], ["stop"]):
        return service.main(argv[0], argv[1:])
    if argv[:1] == ["driver"]:
        return driver.main(argv[1:])
    if argv[:1] == ["report"]:
        return report.main(argv[1:])
    if argv[:1] in (["reset-checkpoint"], ["rollback"], ["maintain"]):
        return operations.main(argv[0], argv[1:])
    args = parser.parse_args(argv)
    if args.command == "jars":
        from dbt_spark_streaming.java_runtime import choose_java, describe

        print(describe(choose_java()))
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
        print("`dbt-spark-streaming serve` keeps the streaming models running after they catch up; "
              "for `dbt run` to do it too, add to dbt_project.yml:\n  on-run-end:\n    - \"{{ serve_streaming_queries() }}\"")
    return 0


if __name__ == "__main__":
    sys.exit(main())
