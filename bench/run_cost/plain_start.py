"""Run-cost part, no-op side C: a plain PySpark session with Delta Lake and Hive support, set up
the usual way, and one metastore query, in a process of its own.

What a user compares a no-op `dbt run` with: no project code and no tuning, only what Delta's
quick start asks for (its SQL extension and catalog, Hive support for a persistent catalog) with
Delta's jars on `spark.jars` (the ones `make setup` fetched, rather than `spark.jars.packages`,
so that no Ivy resolution over the network is timed). The metastore is Spark's default embedded
Derby, in a folder of this side's own under the lakehouse.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from bench.harness.child_process import seconds_since_spawn, spawned_at


def main(argv: list[str] | None = None) -> int:
    main_started = time.time()
    parser = argparse.ArgumentParser(prog="python -m bench.run_cost.plain_start")
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--result", type=Path, required=True)
    args = parser.parse_args(argv)
    from pyspark.sql import SparkSession

    from dbt_spark_streaming.classpath import JARS_DIR

    imports_s = main_started - spawned_at()
    args.folder.mkdir(parents=True, exist_ok=True)
    os.chdir(args.folder)  # Derby's metastore_db and derby.log, as a plain session puts them
    delta_jars = sorted(str(jar) for jar in JARS_DIR.glob("delta-*.jar"))
    session_started = time.perf_counter()
    spark = (
        SparkSession.builder.master("local[*]").appName("plain")
        .config("spark.jars", ",".join(delta_jars))
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.sql.warehouse.dir", str(args.folder / "warehouse"))
        .enableHiveSupport()
        .getOrCreate()
    )
    session_s = time.perf_counter() - session_started
    query_and_write_split(spark, args.result, imports_s, session_s)
    return 0


def query_and_write_split(spark, result: Path, imports_s: float, session_s: float) -> None:
    """`show tables`, then the side's split into `result`: imports, session start, the query
    (the metastore client's start), and all of it from the parent's spawn."""
    spark.sql("show tables").collect()
    result.write_text(json.dumps({
        "imports_s": imports_s,
        "session_s": session_s,
        "query_s": seconds_since_spawn() - imports_s - session_s,
        "inside_s": seconds_since_spawn(),
    }, indent=1))


if __name__ == "__main__":
    raise SystemExit(main())
