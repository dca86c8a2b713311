"""Python side of the streaming lakehouse, grouped by where it runs.

    runtime/   what runs inside dbt (the adapter plugin calls it through runtime/__init__.py)
    ops/       commands against a lakehouse: service, status, report, lint
    infra/     launchers: Maven jars, Kafka broker, standalone cluster, PostgreSQL metastore
    demo/      the demo's data and `make run`
    testing/   the harness shared by tests, chaos and benchmarks

`python -m python_runners <command>` is the one command line for all of it outside dbt.
"""
