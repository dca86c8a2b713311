"""What listing a landing folder costs a file source once it has taken many files, with and
without cleaning the folder up (a source's `archive_to` / `delete_processed`, Spark's cleanSource).

    .venv/bin/python -m bench.landing_listing [--taken 100,100000] [--runs 3]

Spark's file source lists its whole folder to find new files, every trigger, and filters out the
ones its checkpoint has seen; a folder that keeps every file taken is listed whole forever. With
cleanSource the folder holds only what has not been processed yet.

On a lakehouse of its own (.lakehouse/bench/landing_listing, emptied at the start), for each
number of files taken (--taken) and each setting (off, archive, delete): that many tiny json files
(one line each, written by Python) in a folder of their own, taken by one availableNow query in one
batch (maxFilesPerTrigger unlimited), Spark's cleanSource set as the setting says, into Spark's
noop sink. Then one run lands one more file and runs again from the same checkpoint (with a
cleanSource, that run moves or deletes the files taken, on a thread of Spark's that goes on after
the query ended: the benchmark waits until they are gone, and prints how long, the run included). Then --runs measured runs,
each landing one more file first, as `dbt run` runs a source: availableNow, from the checkpoint.
An availableNow query lists the folder once, as it starts (Spark's prepareForTriggerAvailableNow),
so the figure is the run's wall time, start to end; the batch's `triggerExecution` and
`latestOffset` come from its progress. Last, a query with a processing-time trigger (as `serve`
runs a model that is not on-new-data), which lists the folder at every trigger: one more file
landed per trigger, --runs times, and its batches' `latestOffset` (the listing) and
`triggerExecution`. Prints the medians, the files in the folder when measured, and a summary line
`bench landing-listing: ...`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path
from statistics import median

from bench.harness.fresh_lakehouse import bench_folder, fresh_session
from bench.harness.machine import code_version, load_average
from bench.harness.run import Run, command_line

SCHEMA = "id long, kind string"
SETTINGS = ("off", "archive", "delete")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.landing_listing",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--taken", default="100,100000", help="files already taken, comma-separated")
    parser.add_argument("--runs", type=int, default=3, help="measured runs (and triggers) per case")
    parser.add_argument("--settings", default=",".join(SETTINGS), help=f"of {','.join(SETTINGS)}")
    return parser.parse_args(argv)


def land(folder: Path, start: int, count: int) -> None:
    for number in range(start, start + count):
        (folder / f"f{number:07d}.json").write_text(f'{{"id": {number}, "kind": "k"}}\n')


def files_in(folder: Path) -> int:
    with os.scandir(folder) as entries:
        return sum(1 for entry in entries if entry.is_file())


def reader(spark, folder: Path, setting: str, archive: Path, max_files: int | None = None):
    options = {}
    if max_files:
        options["maxFilesPerTrigger"] = str(max_files)
    if setting == "archive":
        options.update(cleanSource="archive", sourceArchiveDir=str(archive))
    elif setting == "delete":
        options["cleanSource"] = "delete"
    return spark.readStream.name("input").format("json").schema(SCHEMA).options(**options).load(str(folder))


def available_now(spark, frame, checkpoint: str) -> dict:
    started = time.perf_counter()
    query = (frame.writeStream.format("noop").option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    query.awaitTermination()
    seconds = time.perf_counter() - started
    progress = [p for p in query.recentProgress if p["numInputRows"] > 0]
    return {
        "seconds": seconds,
        "rows": sum(p["numInputRows"] for p in progress),
        "trigger_ms": sum(p["durationMs"].get("triggerExecution", 0) for p in progress),
        "latest_offset_ms": sum(p["durationMs"].get("latestOffset", 0) for p in progress),
    }


def processing_time(spark, frame, checkpoint: str, folder: Path, next_id: int, runs: int) -> list[dict]:
    """A query with a 1-second processing-time trigger; one file landed before each batch."""
    query = (frame.writeStream.format("noop").option("checkpointLocation", checkpoint)
             .trigger(processingTime="1 second").start())
    batches: list[dict] = []
    try:
        for number in range(runs):
            land(folder, next_id + number, 1)
            deadline = time.time() + 120
            while time.time() < deadline:
                done = [p for p in query.recentProgress if p["numInputRows"] > 0]
                if len(done) > number:
                    batches = done
                    break
                time.sleep(0.2)
    finally:
        query.stop()
    return [{"trigger_ms": p["durationMs"].get("triggerExecution", 0),
             "latest_offset_ms": p["durationMs"].get("latestOffset", 0)} for p in batches]


def one_case(spark, root: Path, taken: int, setting: str, runs: int) -> dict:
    case = root / f"{setting}_{taken}"
    folder, archive, checkpoint = case / "landing", case / "archive", str(case / "checkpoint")
    folder.mkdir(parents=True)
    started = time.perf_counter()
    land(folder, 0, taken)
    written = time.perf_counter() - started
    # One batch takes them all, as fast as Spark reads many tiny files: in few tasks (opening a
    # file, not its bytes, costs), and their statuses looked up on the driver rather than by a
    # Spark job of a task per file (getBatch: 21 s -> 3 s for 5,000 files).
    fast = {"spark.sql.files.openCostInBytes": "1",
            "spark.sql.sources.parallelPartitionDiscovery.threshold": str(taken + 10)}
    for key, value in fast.items():
        spark.conf.set(key, value)
    take = available_now(spark, reader(spark, folder, setting, archive, max_files=taken + 1), checkpoint)
    for key in fast:
        spark.conf.unset(key)
    land(folder, taken, 1)
    clean = available_now(spark, reader(spark, folder, setting, archive), checkpoint)
    # Spark cleans on a thread of its own, which goes on after the query has ended (one file at a
    # time: a minute or more for 100,000): wait until only the cleaning run's file is left.
    started = time.perf_counter()
    while setting != "off" and files_in(folder) > 1 and time.perf_counter() - started < 1800:
        time.sleep(1)
    clean["left"], clean["after_s"] = files_in(folder), time.perf_counter() - started
    measured = []
    for number in range(runs):
        land(folder, taken + 1 + number, 1)
        in_folder = files_in(folder)
        result = available_now(spark, reader(spark, folder, setting, archive), checkpoint)
        result["in_folder"] = in_folder
        measured.append(result)
        print(f"  {setting} {taken}: run {number + 1}: {result['seconds']:.2f} s, triggerExecution "
              f"{result['trigger_ms']} ms, latestOffset {result['latest_offset_ms']} ms, "
              f"{in_folder} files in the folder, {result['rows']} rows", flush=True)
    served = processing_time(spark, reader(spark, folder, setting, archive), checkpoint, folder,
                             taken + 1 + runs, runs)
    print(f"  {setting} {taken}: written in {written:.1f} s, taken in {take['seconds']:.1f} s "
          f"({take['rows']} rows), cleaning run {clean['seconds']:.1f} s, then {clean['after_s']:.0f} s "
          f"until {clean['left']} files were left; processing-time batches "
          f"latestOffset {[b['latest_offset_ms'] for b in served]} ms", flush=True)
    shutil.rmtree(case, ignore_errors=True)  # keep the disk small between cases
    return {
        "taken": taken, "setting": setting, "in_folder": median(r["in_folder"] for r in measured),
        "seconds": median(r["seconds"] for r in measured),
        "trigger_ms": median(r["trigger_ms"] for r in measured),
        "latest_offset_ms": median(r["latest_offset_ms"] for r in measured),
        "served_latest_offset_ms": median(b["latest_offset_ms"] for b in served) if served else None,
        "served_trigger_ms": median(b["trigger_ms"] for b in served) if served else None,
        "clean_seconds": clean["seconds"] + clean["after_s"], "take_seconds": take["seconds"],
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    takens = [int(value) for value in args.taken.split(",") if value.strip()]
    settings = [value.strip() for value in args.settings.split(",") if value.strip()]
    record = Run(command_line("python -m bench.landing_listing", argv)).record
    code = code_version()
    spark, _ = fresh_session("landing_listing")
    root = bench_folder("landing_listing") / "cases"
    results = []
    for taken in takens:
        for setting in settings:
            results.append(one_case(spark, root, taken, setting, args.runs))
    print(f"\nRun {record['started_at']} (UTC), `{record['command']}`, code {code}; load average at "
          f"start {record['load_start']}, at end {load_average()}. Medians of {args.runs} runs "
          "(availableNow: one file landed before each, from the checkpoint that took the files) and "
          f"of {args.runs} processing-time batches:\n")
    print("| files taken | cleanSource | files in the folder | availableNow run, s | its triggerExecution, ms "
          "| processing-time batch: latestOffset, ms | its triggerExecution, ms | cleaning the files taken, s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['taken']:,} | {r['setting']} | {r['in_folder']:.0f} | {r['seconds']:.2f} | "
              f"{r['trigger_ms']:.0f} | {r['served_latest_offset_ms']} | {r['served_trigger_ms']} | "
              f"{'-' if r['setting'] == 'off' else format(r['clean_seconds'], '.1f')} |")
    summary = " ".join(f"{r['setting']}@{r['taken']}={r['seconds']:.2f}s/{r['served_latest_offset_ms']}ms"
                       for r in results)
    print(f"\nbench landing-listing: run_s/listing_ms {summary} load={record['load_start']}..{load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
