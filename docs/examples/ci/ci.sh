#!/usr/bin/env bash
# Slim CI for a dbt project on dbt-spark-streaming, on the embedded default: Spark in the job's
# own process, a lakehouse folder of the job's own. Run from the project's folder, with
# `pip install 'dbt-spark-streaming[lint]'` done. docs/ci.md says what each step is for.
#
#   PROD_STATE   a folder holding production's manifest.json: only what the change touches is
#                built: the changed models, what they read and what reads them
#                (+state:modified+), from the job's own test data. Unset: everything is built.
#   DEFER=1      where the job reaches production's metastore and storage (a cluster target):
#                build only state:modified+ and read the rest from production's tables
#                (--defer), leaving production's tables and checkpoints as they are.
#   CI_TARGET    the profile's CI target (default: ci), not a production target, so its
#                schemas and checkpoints are its own (ci_silver, ...).
set -euo pipefail
target="${CI_TARGET:-ci}"

dbt-spark-streaming jars               # Spark's jars, from the cache or Maven Central
dbt-spark-streaming init               # the root-project macros, as the adapter has them
sqlfluff lint models                   # the SQL's style and syntax (.sqlfluff)
dbt-spark-streaming lint               # what a streaming model cannot run, without Spark

if [ -n "${PROD_STATE:-}" ] && [ "${DEFER:-0}" = 1 ]; then
    dbt build --target "$target" --select state:modified+ --defer --state "$PROD_STATE"
elif [ -n "${PROD_STATE:-}" ]; then
    dbt build --target "$target" --select +state:modified+ --state "$PROD_STATE"
else
    dbt build --target "$target"
fi
