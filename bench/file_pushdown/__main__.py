"""What reading json and csv files as a stream costs with Spark's filter pushdown on and off.

    .venv/bin/python -m bench.file_pushdown [--lines 200000] [--files 20] [--runs 5]

With `spark.sql.json.filterPushdown.enabled` (and its csv twin) on, a model's WHERE is checked
while each line is parsed, and a line it rejects never reaches the scan's output: the query's
`numInputRows`, which a streaming model's run line reports as "rows in", then counts only the
lines the filter kept. The project's session turns both off (adapter/dbt_spark_streaming/session.py)
so that "rows in" is every line read; this measures what that costs.

On a lakehouse of its own (.lakehouse/bench/file_filter_pushdown, emptied at the start), --lines
lines of JSON (and the same rows as csv with a header) in --files files: id, kind (null in 1 line
of 50), v (0 to 99,999), ts and a note of 40 characters. Each run streams one folder whole with
availableNow, with the declared schema and a corrupt-record column as the project's sources read
it, through a filter, into Spark's noop sink, from a new checkpoint: a selective filter `kind is
not null and v < 500` (about 0.5% of the lines kept, pushdown's best case) and a mild one (`v <
80000`, about 80% kept). Pushdown on and off run one after the other, the order swapped each
run; one run of each first as warm-up, not counted. Prints the median wall time of the query
(start to its end) per format, filter and setting, the rows in that the query reported, the rows
kept, the median of the runs' off/on ratios, and a summary line `bench file-filter-pushdown:
json_selective_ratio=... json_mild_ratio=... csv_selective_ratio=... csv_mild_ratio=...`. docs/BENCHMARKS.md section 11 holds the figures of the
run it reports (written by hand: this benchmark does not rewrite the document).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from statistics import median

from bench.harness.fresh_lakehouse import bench_folder, fresh_session
from bench.harness.machine import code_version, load_average
from bench.harness.run import Run, command_line

CONFS = ("spark.sql.json.filterPushdown.enabled", "spark.sql.csv.filterPushdown.enabled")
SCHEMA = "id int, kind string, v int, ts string, note string, _corrupt_record string"
# Selective (about 0.5% of the lines kept: most lines rejected while parsed, pushdown's best case)
# and mild (about 80% kept).
FILTERS = {"selective": "kind is not null and v < 500", "mild": "kind is not null and v < 80000"}
FORMATS = ("json", "csv")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.file_pushdown",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=200_000, help="lines landed per format")
    parser.add_argument("--files", type=int, default=20, help="files they land in")
    parser.add_argument("--runs", type=int, default=5, help="measured runs per format and setting")
    return parser.parse_args(argv)


def land(folder: Path, lines: int, files: int) -> dict[str, Path]:
    """The same rows as json lines and as csv with a header, each format in a folder of its own."""
    randomness = random.Random(7)
    folders = {fmt: folder / "landing" / fmt for fmt in FORMATS}
    for path in folders.values():
        path.mkdir(parents=True)
    per_file = -(-lines // files)
    for index in range(files):
        rows = []
        for number in range(index * per_file, min(lines, (index + 1) * per_file)):
            kind = None if number % 50 == 0 else f"k{number % 7}"
            rows.append({"id": number, "kind": kind, "v": randomness.randrange(100_000),
                         "ts": f"2026-11-25T10:{number % 60:02d}:00", "note": "n" * 40})
        (folders["json"] / f"part-{index:03d}.json").write_text(
            "".join(json.dumps(row) + "\n" for row in rows))
        (folders["csv"] / f"part-{index:03d}.csv").write_text(
            "id,kind,v,ts,note\n" + "".join(
                f"{row['id']},{row['kind'] or ''},{row['v']},{row['ts']},{row['note']}\n" for row in rows))
    return folders


def one_run(spark, fmt: str, path: Path, where: str, pushdown: bool, checkpoint: str) -> dict:
    for conf in CONFS:
        spark.conf.set(conf, str(pushdown).lower())
    reader = spark.readStream.name("input").format(fmt).schema(SCHEMA).option("columnNameOfCorruptRecord", "_corrupt_record")
    if fmt == "csv":
        reader = reader.option("header", "true")
    frame = reader.load(str(path)).select("*", "_metadata").where(where).select("id", "kind", "v")
    started = time.perf_counter()
    query = (frame.writeStream.format("noop").option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    query.awaitTermination()
    seconds = time.perf_counter() - started
    progress = query.recentProgress
    return {
        "seconds": seconds,
        "rows_in": sum(p["numInputRows"] for p in progress),
        "rows_kept": sum(p["sink"].get("numOutputRows", 0) or 0 for p in progress),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    record = Run(command_line("python -m bench.file_pushdown", argv)).record
    code = code_version()
    spark, _ = fresh_session("file_filter_pushdown")
    folder = bench_folder("file_filter_pushdown")
    folders = land(folder, args.lines, args.files)
    results: dict[tuple[str, str, bool], list[dict]] = {}
    counter = 0
    for run in range(args.runs + 1):  # run 0: warm-up
        for fmt in FORMATS:
            for name, where in FILTERS.items():
                settings = (True, False) if run % 2 == 0 else (False, True)
                for pushdown in settings:
                    counter += 1
                    result = one_run(spark, fmt, folders[fmt], where, pushdown,
                                     str(folder / "checkpoints" / str(counter)))
                    if run > 0:
                        results.setdefault((fmt, name, pushdown), []).append(result)
                    print(f"run {run}{' (warm-up)' if run == 0 else ''}: {fmt} {name} pushdown "
                          f"{'on ' if pushdown else 'off'}: {result['seconds']:.2f} s, "
                          f"{result['rows_in']} rows in, {result['rows_kept']} kept", flush=True)
    for conf in CONFS:
        spark.conf.unset(conf)
    print(f"\nRun {record['started_at']} (UTC), `{record['command']}`, code {code}; load average at start "
          f"{record['load_start']}, at end {load_average()}. {args.lines:,} lines per format in "
          f"{args.files} files; "
          f"median of {args.runs} runs; off / on: the median of each run's ratio (the two settings "
          f"ran one after the other, so a change in the machine's load moves both):\n")
    print("| format | filter | pushdown | median s | min, max s | rows in (numInputRows) | rows kept | off / on |")
    print("|---|---|---|---|---|---|---|---|")
    summary = []
    for fmt in FORMATS:
        for name, where in FILTERS.items():
            on_runs, off_runs = results[(fmt, name, True)], results[(fmt, name, False)]
            ratio = median(off["seconds"] / on["seconds"] for on, off in zip(on_runs, off_runs))
            for pushdown, runs in ((True, on_runs), (False, off_runs)):
                seconds = [r["seconds"] for r in runs]
                print(f"| {fmt} | {name}: `{where}` | {'on' if pushdown else 'off'} | {median(seconds):.2f} | "
                      f"{min(seconds):.2f}, {max(seconds):.2f} | {runs[0]['rows_in']:,} | "
                      f"{runs[0]['rows_kept']:,} | {'-' if pushdown else f'{ratio:.2f}'} |")
            summary.append(f"{fmt}_{name}_ratio={ratio:.2f}")
    print(f"\nbench file-filter-pushdown: {' '.join(summary)} load={record['load_start']}..{load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
