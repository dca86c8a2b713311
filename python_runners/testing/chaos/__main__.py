"""`python -m python_runners chaos [--kills N] [--seed S]`: the chaos run behind `make chaos`.

Its last line is the verdict:
`chaos: kills=<n> landed=<rows> lost=<n> duplicated=<n> gold_matches_recompute=<yes|no>
cdc_matches_reference=<yes|no>` (one line): recordings lost or duplicated in bronze, silver, the
stream-stream join and silver's quarantine table (each where silver's expectations put it); gold
equal to a batch recompute; silver.patients and silver.patient_ward_history (cdc_table) equal to
the landed change feed applied in plain Python.

Maintenance is on (docs/maintenance.md) and frequent: the served runs compact a table once it
holds `--compact-at` files and vacuum it every `--vacuum-every` seconds, and `--maintenance-kills`
of the kills (a fifth by default) come at the instant a served run commits a compaction or starts
a VACUUM; each kill says which tables were being maintained (that commit, the service's status
file, written every 2 s, and a VACUUM begun in a table's log and not ended).

Every `--attached-every`th run attaches to a warm driver started for it (chaos/attached.py): the
kill takes down the client only, the driver must release it and serve on, and is stopped after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

from python_runners.testing.chaos.attached import AttachedRunFailed, ChaosDriver
from python_runners.testing.chaos.audit import audit
from python_runners.testing.chaos.kill_moments import plan
from python_runners.testing.chaos.maintenance import maintained_at_kill
from python_runners.testing.chaos.lander import Lander
from python_runners.testing.logged_process import ProcessExited
from python_runners.testing.pipeline_process import PipelineProcess
from python_runners.testing.separate_lakehouse import use_separate_lakehouse
from python_runners.testing.chaos.stream_state import (
    BETWEEN_BATCHES, COMMITTED_NOT_CHECKPOINTED, MID_BATCH, ModelPaths, stream_state,
)
from python_runners.testing.lakehouse_store import LakehouseStore
from python_runners.demo.data import RECORDINGS_FOLDER, STATUS_FOLDER, land_batch, land_status_reports
from python_runners.demo.patient_changes import PATIENT_CHANGES_FOLDER, land_patient_changes
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.serve.upkeep import COMPACT_AT_VARIABLE, VACUUM_EVERY_VARIABLE
from python_runners import REPO_ROOT

# (model, schema); the first four are the kill targets, one per kind of batch: an append, an
# append joined with a seed, a complete-mode aggregate, a cdc_table's MERGE (scd1, with its
# tombstones committed after the table). Kills on a Delta commit rotate over them in this order
# (the cdc_table last: it commits minutes into an always-on run).
MODELS = [
    ("bronze_recordings", "bronze"),
    ("silver_recordings", "silver"),
    ("device_counts", "gold"),
    ("patients", "silver"),
    ("patient_ward_history", "silver"),
    ("bronze_patient_changes", "bronze"),
    ("ward_heart_rates", "gold"),
    ("quarantined_recordings", "silver"),
]
FINAL_RUN_TIMEOUT = 1800
BEFORE_FIRST_BATCH = "nothing recorded since the last kill (start-up, or redoing the interrupted batch)"


class ChaosFailure(RuntimeError):
    pass


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m python_runners chaos", description=__doc__)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1, help="seed for the random kill moments")
    parser.add_argument("--lakehouse", default=str(REPO_ROOT / ".lakehouse" / "chaos"),
                        help="a lakehouse of its own, emptied first")
    parser.add_argument("--triggers", default="on_new_data,1 second",
                        help="the runs' triggers, taken in turn: on_new_data (the service's "
                             "default, run when an input commits) and a processing-time interval")
    parser.add_argument("--max-delay", type=float, default=60.0,
                        help="latest random kill, in seconds after a run starts")
    parser.add_argument("--land-every", type=float, default=2.0, help="seconds between landings")
    parser.add_argument("--records", type=int, default=50, help="recordings per landing")
    parser.add_argument("--compact-at", type=int, default=4,
                        help="live files a served table is compacted at (the service's is 50)")
    parser.add_argument("--vacuum-every", type=int, default=20,
                        help="seconds between a served table's VACUUMs (the service's is 600)")
    parser.add_argument("--maintenance-kills", type=int, default=None,
                        help="kills at the instant the service commits a compaction or starts a "
                             "VACUUM, in served runs (default: a fifth of --kills)")
    parser.add_argument("--store", choices=("local", "s3"), default=os.environ.get("STORE") or "local",
                        help="where the lakehouse lives: local disk, or an S3 API on loopback "
                             "(S3Proxy, `s3a://`; this machine's files stay under --lakehouse)")
    parser.add_argument("--attached-every", type=int, default=3,
                        help="every Nth run attaches to a warm driver started for it, and only the "
                             "client is killed (0: none)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    try:
        return _run(parse_args(argv))
    except (ChaosFailure, AttachedRunFailed) as failure:
        print(f"chaos: FAILED: {failure}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    root = Path(args.lakehouse).resolve()
    shutil.rmtree(root, ignore_errors=True)
    store = LakehouseStore(args.store, root)
    use_separate_lakehouse(root)  # the audit's own Spark session opens the same lakehouse
    os.environ.update(store.env())
    os.environ.setdefault("SPARK_SHUFFLE_PARTITIONS", "2")
    env = {**os.environ, COMPACT_AT_VARIABLE: str(args.compact_at), VACUUM_EVERY_VARIABLE: str(args.vacuum_every)}
    lakehouse = Lakehouse.from_env(env)
    landings = [lakehouse.landing_path(name) for name in (RECORDINGS_FOLDER, STATUS_FOLDER, PATIENT_CHANGES_FOLDER)]
    folder, reports, changes = (store.landing(location) for location in landings)
    logs = root / "chaos-logs"
    logs.mkdir(parents=True)
    models = [_paths(lakehouse, model, schema, store.view) for model, schema in MODELS]

    say(f"chaos: {args.kills} kills (seed {args.seed}) on lakehouse {lakehouse.root}"
        f"{store.said()}; dbt logs in {logs}")
    first = land_batch(folder, records=args.records).number
    land_status_reports(first, reports)
    land_patient_changes(first, changes)
    store.upload_landed(landings)
    _run_to_completion(PipelineProcess(["seed"], env, logs / "seed.log"), "dbt seed")

    triggers = [trigger.strip() for trigger in args.triggers.split(",") if trigger.strip()]
    lander = Lander(folder, reports, changes, args.land_every, args.records, files=2,
                    after_landing=lambda: store.upload_landed(landings))
    lander.start()
    moments = Counter()
    during_maintenance = 0
    states = _states(models)
    warm_driver = ChaosDriver(env, lakehouse)
    try:
        maintenance_kills = args.kills // 5 if args.maintenance_kills is None else args.maintenance_kills
        moments_planned = plan(args.kills, args.seed, models[:4], args.max_delay, maintenance_kills, models)
        for number, moment in enumerate(moments_planned, 1):
            trigger = "on_new_data" if moment.needs_serving else triggers[(number - 1) % len(triggers)]
            attached = args.attached_every > 0 and number % args.attached_every == 0
            if attached:
                warm_driver.start()
            run_started = time.time()
            pipeline = PipelineProcess(
                ["run", "--vars", f"{{stream_trigger: '{trigger}'}}"], env,
                logs / f"run-{number:02d}.log",
            )
            try:
                caught = moment.wait(pipeline)
            except ProcessExited:
                raise ChaosFailure(_exited_message(pipeline, f"run {number}")) from None
            seconds = pipeline.seconds_running
            pipeline.kill_tree()
            # An attached run's queries run in the driver: read the tables once it stopped them.
            released = warm_driver.after_kill(pipeline) if attached else ""
            before, states = states, _states(models)
            moved = {model: state for model, state in states.items() if state != before[model]}
            kind = _kind(moved) if moved else BEFORE_FIRST_BATCH
            moments[kind] += 1
            where = _describe(moved) if moved else kind
            maintained = maintained_at_kill(lakehouse, models, run_started)
            if caught or maintained:
                during_maintenance += 1
                also = [table for table in maintained if not (caught and caught.endswith(f" of {table}"))]
                where += "; during maintenance: " + ", ".join(([caught] if caught else []) + also)
            if attached:
                where += "; " + released
                warm_driver.stop()
            say(f"chaos: kill {number}/{args.kills} {moment.description} ({seconds:.1f} s in, "
                f"trigger {trigger}): {where}")
    finally:
        lander.stop()
        warm_driver.close()

    say(f"chaos: {lander.batches + 1} landings; catching up with a plain `dbt run`")
    _run_to_completion(PipelineProcess(["run"], env, logs / "final.log"), "the final dbt run")
    say("chaos: kill moments: " + ", ".join(f"{n} {kind}" for kind, n in moments.most_common()))
    say(f"chaos: {during_maintenance} of {args.kills} kills fell during maintenance")

    from dbt_spark_streaming.session import get_or_create_session  # only now: the lock is free

    result = audit(get_or_create_session(lakehouse, extra_conf=store.spark_conf()), folder, changes)
    say(f"chaos: silver's expectations: {result.quarantined} of {result.landed} recordings belong in "
        f"the quarantine, {result.dropped} are dropped (demo/recording_rules.py)")
    for layer, (lost, duplicated) in result.per_layer.items():
        say(f"chaos: {layer}: lost={lost} duplicated={duplicated}")
    for mismatch in result.gold_mismatches:
        say(f"chaos: MISMATCH {mismatch}")
    say(f"chaos: cdc: {result.changes_landed} patient changes landed; silver.patients and "
        "silver.patient_ward_history " + ("differ from" if result.cdc_mismatches else "equal")
        + " the reference (testing/cdc_reference.py)")
    for mismatch in result.cdc_mismatches:
        say(f"chaos: MISMATCH {mismatch}")
    say(f"chaos: kills={args.kills} landed={result.landed} lost={result.lost} "
        f"duplicated={result.duplicated} "
        f"gold_matches_recompute={'no' if result.gold_mismatches else 'yes'} "
        f"cdc_matches_reference={'no' if result.cdc_mismatches else 'yes'}")
    return 0 if result.passed else 1


def say(line: str) -> None:
    print(line, flush=True)


def _paths(lakehouse: Lakehouse, model: str, schema: str, view) -> ModelPaths:
    return ModelPaths(
        model=model,
        table=f"{schema}.{model}",
        table_path=view(f"{lakehouse.warehouse}/{schema}.db/{model}"),
        checkpoint=view(f"{lakehouse.checkpoints}/{schema}/{model}"),
    )


def _run_to_completion(pipeline: PipelineProcess, what: str) -> None:
    if pipeline.wait(timeout=FINAL_RUN_TIMEOUT) != 0:
        raise ChaosFailure(_exited_message(pipeline, what))


def _exited_message(pipeline: PipelineProcess, what: str) -> str:
    return (f"{what} exited with code {pipeline.process.returncode}; the end of "
            f"{pipeline.log_path}:\n{pipeline.log_tail()}")


def _states(models: list[ModelPaths]) -> dict[str, tuple[str, int | None]]:
    return {paths.model: stream_state(paths) for paths in models}


def _kind(states: dict[str, tuple[str, int | None]]) -> str:
    kinds = {state for state, _ in states.values()}
    for kind in (COMMITTED_NOT_CHECKPOINTED, MID_BATCH):
        if kind in kinds:
            return kind
    return BETWEEN_BATCHES


def _describe(states: dict[str, tuple[str, int | None]]) -> str:
    in_flight = [
        f"{model} batch {batch} {state}" for model, (state, batch) in states.items()
        if batch is not None
    ]
    if in_flight:
        return "; ".join(in_flight)
    return "no batch in flight"


if __name__ == "__main__":
    sys.exit(main())
