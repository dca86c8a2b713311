"""`python -m python_runners cluster start|stop|status`: a Spark cluster on this machine.

A standalone master with its workers (standalone_cluster.py) and a PostgreSQL server holding the
shared Hive metastore (postgres_metastore.py), both on loopback and kept under the lakehouse
folder (LAKEHOUSE_DIR). `start` prints the settings the `cluster` dbt target reads.
"""

from __future__ import annotations

import argparse
import sys

from python_runners.infra import postgres_metastore
from python_runners.infra import standalone_cluster
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.metastore import URL_VARIABLE


def add_commands(commands: argparse._SubParsersAction) -> None:
    cluster = commands.add_parser("cluster", help="a standalone Spark cluster and metastore on loopback")
    cluster.add_argument("action", choices=("start", "stop", "status"))


def main(args: argparse.Namespace) -> int:
    settings = standalone_cluster.ClusterSettings.from_env()
    try:
        if args.action == "start":
            url = postgres_metastore.start()
            state = standalone_cluster.start(settings)
            print(f"cluster: {len(standalone_cluster.alive_workers(state))} workers alive, "
                  f"master web UI {settings.master_webui}")
            print("cluster: for `dbt run --target cluster`:")
            print(f"  export LAKEHOUSE_DIR={Lakehouse.from_env().root}")
            print(f"  export SPARK_MASTER={settings.master_url}")
            print(f"  export {URL_VARIABLE}='{url}'")
        elif args.action == "stop":
            standalone_cluster.stop(settings)
            postgres_metastore.stop()
            print("cluster: stopped")
        else:
            return status(settings)
    except (standalone_cluster.ClusterError, postgres_metastore.PostgresMetastoreError) as error:
        print(f"cluster: {error}", file=sys.stderr)
        return 1
    return 0


def status(settings: standalone_cluster.ClusterSettings) -> int:
    metastore_up = postgres_metastore.is_running()
    print(f"metastore: {'running at ' + postgres_metastore.jdbc_url() if metastore_up else 'not running'}")
    try:
        state = standalone_cluster.master_state(settings)
    except OSError:
        print(f"master: not reachable at {settings.master_webui}")
        return 1
    for worker in state.get("workers", []):
        print(f"worker {worker['id']}: {worker['state']}, {worker['cores']} cores "
              f"({worker['coresused']} used), {worker['webuiaddress']}")
    print(f"master: {state.get('status')} at {state.get('url')}, "
          f"{len(state.get('activeapps', []))} applications running")
    return 0 if metastore_up and standalone_cluster.alive_workers(state) else 1
