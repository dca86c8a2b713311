"""`python -m python_runners s3-store start|stop`: the loopback S3 API (s3_store.py) as a server
that runs on after the command, for trying the `s3` dbt target by hand.

Its objects live under the lakehouse folder (`<LAKEHOUSE_DIR>/s3-store/data/<bucket>/...`), its
port is S3_STORE_PORT (9090); `start` creates the bucket `lakehouse` and prints the settings the
profile's `s3` target reads.
"""

from __future__ import annotations

import argparse
import os
import sys

from python_runners.infra.s3_store import (
    ACCESS_KEY, DEFAULT_PORT, REGION, SECRET_KEY, S3StoreError, start_detached, stop_detached, store_dir,
)
from dbt_spark_streaming.lakehouse import DEFAULT_FOLDER, Lakehouse

BUCKET = "lakehouse"


def add_commands(commands: argparse._SubParsersAction) -> None:
    store = commands.add_parser("s3-store", help="an S3 API on loopback (S3Proxy), for the s3 target")
    store.add_argument("action", choices=("start", "stop"))


def main(args: argparse.Namespace) -> int:
    workdir = store_dir(Lakehouse.from_env().local)
    try:
        if args.action == "stop":
            print("s3-store: stopped" if stop_detached(workdir) else "s3-store: not running")
            return 0
        store = start_detached(workdir, int(os.environ.get("S3_STORE_PORT", DEFAULT_PORT)))
    except S3StoreError as error:
        print(f"s3-store: {error}", file=sys.stderr)
        return 1
    bucket = store.create_bucket(BUCKET)
    print(f"s3-store: S3Proxy at {store.endpoint}, objects under {store.data_dir}")
    print("s3-store: for `dbt run --target s3`:")
    print(f"  export LAKEHOUSE_DIR={bucket}/demo LAKEHOUSE_LOCAL_DIR={os.path.abspath(DEFAULT_FOLDER)}")
    print(f"  export S3_ENDPOINT={store.endpoint} AWS_REGION={REGION}")
    print(f"  export AWS_ACCESS_KEY_ID={ACCESS_KEY} AWS_SECRET_ACCESS_KEY={SECRET_KEY}")
    return 0
