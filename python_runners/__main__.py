"""One command line for everything outside dbt: `python -m python_runners <command> ...`.

    demo                      land data and run the pipeline twice, printing gold (make run)
    land [--records N] [--files K]   land one new batch: recordings, status reports, patient changes
    service start|status|stop the always-on pipeline (make serve / status / stop)
    cluster start|stop        a standalone Spark cluster and PostgreSQL metastore (make cluster-*)
    s3-store start|stop       an S3 API on loopback for the `s3` target (make s3-store-*)
    lint                      streaming rules sqlfluff cannot know (make lint)
    report                    throughput and batch duration per model, PNG and HTML (make report)
    chaos                     SIGKILL the always-on pipeline while data lands, then audit (make chaos)
    jars [--kafka-broker | --s3-store]   copy the pinned jars from Maven Central (make setup)
    reset-checkpoint --select MODEL --from-now|--from-version N|--from-timestamp T|--from-offsets J
                              reset one model's checkpoint, keep its table (docs/changing-models.md)
    rollback --select MODEL   put a model back as before its last redeploy (docs/changing-models.md)
"""

from __future__ import annotations

import argparse
import sys

# Commands that parse their own options: everything after the command name is theirs.
_FORWARDED = {
    "lint": "python_runners.ops.lint",
    "chaos": "python_runners.testing.chaos.__main__",
}
# The installed `dbt-spark-streaming` command's, on this repository's project and profiles.
_PACKAGE_COMMANDS = ("report", "reset-checkpoint", "rollback")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in _FORWARDED:
        from importlib import import_module

        return import_module(_FORWARDED[argv[0]]).main(argv[1:])
    if argv and argv[0] in _PACKAGE_COMMANDS:
        from python_runners.ops import package_command

        return package_command.run(argv[0], argv[1:])

    from python_runners.infra import cluster, s3_store_command
    from python_runners.ops import service

    parser = argparse.ArgumentParser(prog="python -m python_runners", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="land data and run the pipeline twice, printing gold")
    land = commands.add_parser(
        "land", help="land one new batch of device recordings, status reports and patient changes"
    )
    land.add_argument("--records", type=int, default=200)
    land.add_argument("--files", type=int, default=2)
    service.add_commands(commands)
    cluster.add_commands(commands)
    s3_store_command.add_commands(commands)
    for name in (*_FORWARDED, *_PACKAGE_COMMANDS):
        commands.add_parser(name, help=f"see `python -m python_runners {name} --help`")
    jars = commands.add_parser("jars", help="copy the pinned jars from Maven Central")
    servers = jars.add_mutually_exclusive_group()
    servers.add_argument("--kafka-broker", action="store_true",
                         help="the test Kafka broker's jars (.jars-kafka-broker/), not Spark's")
    servers.add_argument("--s3-store", action="store_true",
                         help="the test S3 API server's jar (.jars-s3-store/), not Spark's")
    args = parser.parse_args(argv)

    if args.command == "service":
        return service.main(args)
    if args.command == "cluster":
        return cluster.main(args)
    if args.command == "s3-store":
        return s3_store_command.main(args)
    if args.command == "jars":
        return _fetch_jars(args.kafka_broker, args.s3_store)
    from python_runners.demo import pipeline

    if args.command == "demo":
        pipeline.main()
    else:
        pipeline.land(records=args.records, files=args.files)
    return 0


def _fetch_jars(kafka_broker: bool, s3_store: bool) -> int:
    if kafka_broker or s3_store:
        from python_runners.infra import kafka_broker_jars, s3_store as s3_store_server

        for path in (kafka_broker_jars if kafka_broker else s3_store_server).fetch():
            print(path)
        return 0
    from dbt_spark_streaming.java_runtime import choose_java, describe
    from dbt_spark_streaming.jvm_options import build_class_data_archive
    from python_runners.infra import maven

    print(describe(choose_java()))  # a Java Spark cannot run on stops the set-up here
    for path in maven.fetch():
        print(path)
    # Never fails the set-up: without the archive sessions only start slower.
    archive = build_class_data_archive()
    if archive:
        print(archive)
    return 0


if __name__ == "__main__":
    sys.exit(main())
