"""`make bench-object-store`: the lakehouse on the S3 API on loopback against local disk, in one run.

    python -m bench.object_store [--pairs 5] [--history 100000] [--landings 60] [--idle-seconds 120]

Two lakehouses of the demo, one per store (python_runners/testing/lakehouse_store.py), each set
up once (--history recordings landed, `dbt build`, `dbt run`; not measured). Then, in fresh
processes timed from here, alternating local / s3:
- no-op: `dbt run` of every streaming and cdc model with nothing new;
- 1%: a landing of 1% of --history recordings, then the same `dbt run`.
Then per store, bench/latency's three-hop path served on_new_data (--landings files); and every
model of the demo served, a few landings, then the service idle for --idle-seconds: its CPU
share and, on the store, the requests it made of it per minute.

S3Proxy on loopback answers in well under a millisecond: a real bucket's 10-50 ms per request
add to each figure the requests it makes (said beside the figures). It rewrites section 15 of
docs/BENCHMARKS.md and ends with the line
`bench object-store: noop_s=<local>/<s3> one_pct_s=<local>/<s3> p50_ms=<local>/<s3> idle_requests_per_min=<s3>`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from statistics import median

from bench.harness.child_process import run_child
from bench.harness.doc import BENCHMARKS_DOC, read_document, replace_section
from bench.harness.fresh_lakehouse import empty_folder
from bench.harness.run import Run, Steps, command_line
from bench.latency.measure import measure_latency
from bench.latency.report import latency_summary
from bench.object_store.report import object_store_section, object_store_summary
from dbt_spark_streaming.lakehouse import Lakehouse
from python_runners.demo.data import RECORDINGS_FOLDER, STATUS_FOLDER, land_batch, land_status_reports
from python_runners.demo.patient_changes import PATIENT_CHANGES_FOLDER, land_patient_changes
from python_runners.testing.dbt_process import dbt_command
from python_runners.testing.lakehouse_store import KINDS, LakehouseStore
from python_runners.testing.separate_lakehouse import separate_lakehouse_env

STREAMING_MODELS = ["config.materialized:streaming_table", "config.materialized:cdc_table"]
FOLDERS = (RECORDINGS_FOLDER, STATUS_FOLDER, PATIENT_CHANGES_FOLDER)
IDLE_RUN_LANDINGS = 10


class StoreLakehouse:
    """One store's demo lakehouse: where it lands, and its `dbt run`s timed from here."""

    def __init__(self, kind: str, log_dir: Path):
        self.kind, self.log_dir = kind, log_dir
        self.root = empty_folder(f"object_store_{kind}")
        self.store = LakehouseStore(kind, self.root)
        self.env = separate_lakehouse_env(self.root, **self.store.env())
        lakehouse = Lakehouse.from_env(self.env)
        self.landings = [lakehouse.landing_path(folder) for folder in FOLDERS]

    def land(self, records: int) -> float:
        """A landing of the demo's three sources, written locally and (on the store) PUT."""
        recordings, status, changes = (self.store.landing(location) for location in self.landings)
        batch = land_batch(recordings, records=records, files=max(1, records // 50_000))
        land_status_reports(batch.number, status)
        land_patient_changes(batch.number, changes)
        self.store.upload_landed(self.landings)
        return batch.kept

    def dbt(self, name: str, *args: str) -> float:
        """`dbt <args>` in a process of its own; its wall seconds."""
        return run_child(dbt_command(list(args), self.root / "target"), self.env,
                         self.log_dir / f"object_store_{self.kind}_{name}.log")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.object_store", description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=5, help="runs of each store, alternating")
    parser.add_argument("--history", type=int, default=100_000, help="recordings landed before the runs")
    parser.add_argument("--landings", type=int, default=60, help="files landed per three-hop latency run")
    parser.add_argument("--landing-interval", type=float, default=1.0, help="seconds between landings")
    parser.add_argument("--idle-seconds", type=float, default=120, help="the idle service's spell")
    parser.add_argument("--latency-only", action="store_true",
                        help="only the three-hop latency and idle requests, on --stores, and no doc")
    parser.add_argument("--stores", default=",".join(KINDS), help="with --latency-only: which stores")
    parser.add_argument("--runs-only", action="store_true", help="only the no-op and 1%% runs, and no doc")
    parser.add_argument("--noop-only", action="store_true", help="with --runs-only: only the no-op runs")
    parser.add_argument("--doc", type=Path, default=BENCHMARKS_DOC)
    args = parser.parse_args(argv)
    if args.noop_only and not args.runs_only:
        parser.error("--noop-only goes with --runs-only (the doc's section needs the 1% runs)")
    return args


def measure_runs(args: argparse.Namespace, log_dir: Path) -> dict:
    lakehouses = [StoreLakehouse(kind, log_dir) for kind in KINDS]
    try:
        setup = {}
        for lakehouse in lakehouses:
            lakehouse.land(args.history)
            setup[lakehouse.kind] = (lakehouse.dbt("build", "build", "--resource-type", "seed",
                                                   "--resource-type", "model")
                                     + lakehouse.dbt("first_run", "run"))
            print(f"  {lakehouse.kind}: {args.history:,} recordings landed, built and run: "
                  f"{setup[lakehouse.kind]:.1f} s", flush=True)
        walls: dict[str, dict[str, list[float]]] = {"noop": {}} if args.noop_only else {"noop": {}, "one_pct": {}}
        new = max(1, args.history // 100)
        for part in walls:
            for number in range(1, args.pairs + 1):
                for lakehouse in lakehouses:
                    if part == "one_pct":
                        lakehouse.land(new)
                    wall = lakehouse.dbt(f"{part}_{number}", "run", "--select", *STREAMING_MODELS)
                    walls[part].setdefault(lakehouse.kind, []).append(wall)
                    print(f"  {part} {number}/{args.pairs} {lakehouse.kind}: {wall:.1f} s", flush=True)
    finally:
        for lakehouse in lakehouses:
            lakehouse.store.stop()
    return {"history": args.history, "new": new, "setup_s": setup, "walls_s": walls,
            "median_s": {part: {kind: median(found) for kind, found in by_kind.items()}
                         for part, by_kind in walls.items()}}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run = Run(command_line("python -m bench.object_store", argv))
    steps = Steps("bench object-store")
    runs = None if args.latency_only else steps.run("object_store_runs", lambda: measure_runs(args, steps.logs))
    if args.runs_only:
        print(f"bench object-store: runs, medians: {runs['median_s']}")
        return 0
    stores = args.stores.split(",") if args.latency_only else KINDS
    latency = {kind: steps.run(f"object_store_latency_{kind}", lambda kind=kind: measure_latency(
        "on_new_data", args.landings, args.landing_interval, steps.logs,
        store=kind, name=f"object_store_latency_{kind}")) for kind in stores}
    # Every model of the demo served, a few landings, then idle: what waiting costs.
    idle = {kind: steps.run(f"object_store_idle_{kind}", lambda kind=kind: measure_latency(
        "on_new_data", IDLE_RUN_LANDINGS, args.landing_interval, steps.logs, all_models=True,
        idle_seconds=args.idle_seconds, store=kind, name=f"object_store_idle_{kind}")) for kind in stores}
    if runs is None:
        for kind in stores:
            print(f"bench object-store: {kind}: p50_ms={latency_summary(latency[kind])['p50_ms']:.0f} "
                  f"idle_cpu_pct={idle[kind]['idle_cpu_pct']:.1f} "
                  f"idle_requests_per_min={idle[kind].get('idle_store_requests_per_min')}")
        return 0
    record = run.end()
    section = object_store_section(record, runs, latency, idle)
    args.doc.write_text(replace_section(read_document(args.doc), section))
    print("\n".join(section))
    print(object_store_summary(runs, latency, idle))
    return 0


if __name__ == "__main__":
    sys.exit(main())
