"""Real SIGKILLs, one per kind of write: `dbt run` killed right after its Delta commit to a table,
before the checkpoint records the batch, and the runs after it replay the batch with every row
exactly once.

One project holds a model of each kind. Each row of KILLS lands more data and kills a run of its
model alone on the model's commit; a last run of every model replays each killed batch and
finishes everything. Every table then equals what the landed data says, each row once. The same
replay is tested in-process and in seconds by the commit fault seam
(tests/session/test_commit_fault_replay.py); this file proves a real kill leaves what it leaves.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

import pytest

from python_runners.testing.killed_runs import KilledRuns
from python_runners.testing.landing import land_json_lines
from streaming_projects import write_streaming_project
from write_kinds import MODELS as WRITE_MODELS, WRITE_KINDS, sources, table_rows

SCHEMA = "killed_on_commit"
ORDERS = """
      - name: orders
        meta:
          stream: {format: json, path: killed_orders, schema: "id bigint, amount double"}
"""
MODELS = {
    **WRITE_MODELS,
    "patient_changes_seen": (
        "select mrn, ward, lsn, _change_type, _commit_version from {{ stream_changes(ref('patients')) }}"
    ),
    "loaded_orders": (
        "{{ config(materialized='copy_into') }}\n"
        "select id, amount from {{ source('landing', 'orders') }}"
    ),
}


@dataclass(frozen=True)
class Kill:
    write: str  # the kind of write killed on its commit
    model: str


KILLS = [*(Kill(kind.write, kind.model) for kind in WRITE_KINDS), Kill("copy_into", "loaded_orders")]
ROUNDS = len(KILLS) + 1  # a first run, then one landing per kill
_LSNS = random.Random(7).sample(range(1, 6 * ROUNDS + 1), 6 * ROUNDS)  # unique, out of order


def events(landing: int) -> list[dict]:
    return [{"id": landing * 100 + i, "kind": "abc"[(landing + i) % 3]} for i in range(5)]


def patient_changes(landing: int) -> list[dict]:
    """Six changes of five patients, sequences out of order within and across landings."""
    pick = random.Random(landing)
    changes = []
    for lsn in _LSNS[landing * 6:(landing + 1) * 6]:
        op = pick.choice("IUUD")
        changes.append({"mrn": pick.randint(1, 5), "ward": None if op == "D" else pick.choice("ABC"),
                        "op": op, "lsn": lsn})
    return changes


def orders(landing: int) -> list[dict]:
    return [{"id": landing * 10 + i, "amount": float(i)} for i in range(4)]


def said_ok(log: str, model: str) -> bool:
    """Whether dbt's log says the model's run ended OK (the kill came too late)."""
    return any(" OK " in line and f" model {SCHEMA}.{model} " in line for line in log.splitlines())


@pytest.mark.slow
def test_a_run_killed_on_each_kind_of_write_commit_loses_and_doubles_nothing(spark, tmp_path):
    project = write_streaming_project(tmp_path / "project", "killed_on_commit", SCHEMA, MODELS,
                                      sources("killed", more=ORDERS))
    runs = KilledRuns(project, SCHEMA, tmp_path)
    landed = {"events": [], "changes": [], "orders": []}

    def land(number: int) -> None:
        for name, rows, path in (("events", events(number), "killed_events"),
                                 ("changes", patient_changes(number), "killed_changes"),
                                 ("orders", orders(number), "killed_orders")):
            land_json_lines(runs.landing(path), f"{name}-{number}.json", rows)
            landed[name] += rows

    land(0)
    runs.run("first")
    for number, kill in enumerate(KILLS, start=1):
        land(number)
        killed = runs.killed_on_commit(f"killed-{number}", kill.model, "--select", kill.model)
        assert not said_ok(killed.output(), kill.model), (kill.write, killed.log_tail())
    last = runs.run("after-the-kills")
    assert last.log_contains("that an earlier run left unconfirmed"), "copy_into finished the killed load"

    def read(model: str, columns: list[str]) -> list[tuple]:
        return table_rows(spark, str(runs.table(model)), columns)

    for kind in WRITE_KINDS:
        found = read(kind.model, kind.columns)
        assert max(Counter(found).values()) == 1 and found == kind.expected(landed), kind.write
    seen = read("patient_changes_seen", ["_commit_version", "mrn", "_change_type"])
    assert max(Counter(seen).values()) == 1, "each change of the scd1 table streamed once"
    orders_loaded = Counter(id for id, in read("loaded_orders", ["id"]))
    assert orders_loaded == Counter(row["id"] for row in landed["orders"]), "copy_into"
