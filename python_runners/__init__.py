"""Python side of the streaming lakehouse, grouped by where it runs.

    (the runtime, what runs inside dbt, is the installable package dbt_spark_streaming, in adapter/)
    ops/       commands against a lakehouse: service, status, report, lint
    infra/     launchers: Maven jars, Kafka broker, standalone cluster, PostgreSQL metastore
    demo/      the demo's data and `make run`
    testing/   the harness shared by tests, chaos and benchmarks

`python -m python_runners <command>` is the one command line for all of it outside dbt.
"""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
# The root-project macros (ref, source, fixtures) this repository reads where the adapter ships them.
PROJECT_MACROS = REPO_ROOT / "adapter" / "dbt_spark_streaming" / "project_macros"
