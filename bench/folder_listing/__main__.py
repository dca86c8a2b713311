"""What the project's own listings of a folder cost as the folder grows: a landing folder the
service watches and a no-op run checks on the S3 API (S3Proxy on loopback), and a local folder
whose data files a source's schema policy and COPY INTO list at every run.

    .venv/bin/python -m bench.folder_listing [--files 1000,5000,20000] [--repeats 3]

One process, one session (on .lakehouse/bench/folder_listing, emptied at the start), with the
loopback store started beside it. For each number of files (--files), that many one-line json
files are added to one folder in the store and to one local folder. Then, medians of --repeats:
- s3, the store's own listing: Hadoop's recursive listFiles run to its end inside the JVM (one
  Py4J call); the listing no reader can go below;
- s3, one Py4J call a file: the same listing read back a file at a time, as it was read before;
- s3, `files_under` and `list_names` (jvm/hadoop_fs.py): what the service and a run call;
- local, `list_data_files` through Hadoop (five Py4J calls a file, as before) and as it lists
  now (Python's scandir).
Prints a table and a summary line `bench folder-listing: ...`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from statistics import median

from bench.harness.fresh_lakehouse import bench_folder, use_fresh_bench_lakehouse
from bench.harness.machine import code_version
from bench.harness.run import Run, command_line
from python_runners.infra.s3_store import S3Store

STORE = "s3, the store's own listing"
S3_BEFORE, S3_NOW = "s3, one Py4J call a file (before)", "s3, files_under"
LOCAL_BEFORE, LOCAL_NOW = "local, list_data_files through Hadoop (before)", "local, list_data_files"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.folder_listing", description=__doc__.split("\n")[0])
    parser.add_argument("--files", default="1000,5000,20000", help="folder sizes, comma-separated, rising")
    parser.add_argument("--repeats", type=int, default=3, help="timed listings per figure")
    return parser.parse_args(argv)


def median_ms(listing, repeats: int) -> tuple[float, int]:
    """(median milliseconds, entries listed) of `repeats` calls, after one untimed."""
    listing()
    took, found = [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        found = len(listing())
        took.append((time.perf_counter() - started) * 1000)
    return median(took), found


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sizes = [int(size) for size in args.files.split(",")]
    record = Run(command_line("python -m bench.folder_listing", argv)).record
    with S3Store(bench_folder("folder_listing_store")) as store:
        bucket = store.create_bucket("listing")
        folder = Path(use_fresh_bench_lakehouse("folder_listing"))
        # Imported only now, so nothing can build a session before LAKEHOUSE_DIR points at the bench.
        from dbt_spark_streaming.jvm import hadoop_fs
        from dbt_spark_streaming.lakehouse import Lakehouse
        from dbt_spark_streaming.session import get_or_create_session

        # A lakehouse on the store, as a user's: the session then has S3A's jars.
        lakehouse = Lakehouse.from_env({"LAKEHOUSE_DIR": f"{bucket}/lake", "LAKEHOUSE_LOCAL_DIR": str(folder)})
        spark = get_or_create_session(lakehouse, extra_conf=store.spark_conf())

        remote = f"{bucket}/landing"
        remote_files = store.backing_path(remote)  # S3Proxy lists its back end's files as objects
        local = folder / "local"
        path = spark._jvm.org.apache.hadoop.fs.Path(remote)
        fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
        gateway = spark.sparkContext._gateway

        def in_the_jvm():
            return spark._jvm.org.apache.hadoop.util.functional.RemoteIterators.toArray(
                fs.listFiles(path, True), gateway.new_array(spark._jvm.java.lang.Object, 0))

        def a_call_a_file():
            listed, found = fs.listFiles(path, True), []
            while listed.hasNext():
                found.append(listed.next().getPath().toString())
            return found

        figures = {
            STORE: in_the_jvm,
            S3_BEFORE: a_call_a_file,
            S3_NOW: lambda: hadoop_fs.files_under(spark, remote),
            "s3, list_names": lambda: hadoop_fs.list_names(spark, remote),
            LOCAL_BEFORE: lambda: hadoop_fs._data_files_through_hadoop(spark, f"file:{local}"),
            LOCAL_NOW: lambda: hadoop_fs.list_data_files(spark, str(local)),
        }
        results: dict[str, dict[int, float]] = {name: {} for name in figures}
        made = 0
        for size in sizes:
            for folder in (remote_files, local):
                folder.mkdir(parents=True, exist_ok=True)
                for number in range(made, size):
                    (folder / f"part-{number:06d}.json").write_text('{"id": 1}\n')
            made = size
            for name, listing in figures.items():
                took, found = median_ms(listing, args.repeats)
                if found != size:
                    raise SystemExit(f"bench folder-listing: {name} found {found} of {size} files")
                results[name][size] = took
                print(f"  {size} files, {name}: {took:.0f} ms", flush=True)
    print(f"\nRun {record['started_at']} (UTC), `{record['command']}`, code {code_version()}; load average "
          f"at start {record['load_start']}. Median ms of {args.repeats} listings of one folder:\n")
    print("| listing | " + " | ".join(f"{size:,} files" for size in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for name, by_size in results.items():
        print(f"| {name} | " + " | ".join(f"{by_size[size]:.0f}" for size in sizes) + " |")
    largest = sizes[-1]
    at = {name: f"{by_size[largest]:.0f}" for name, by_size in results.items()}
    print(f"\nbench folder-listing: files={largest} s3_store_ms={at[STORE]} "
          f"s3_files_under_ms={at[S3_BEFORE]}->{at[S3_NOW]} "
          f"local_data_files_ms={at[LOCAL_BEFORE]}->{at[LOCAL_NOW]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
