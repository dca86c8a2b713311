"""A model of each kind of write, and what each table must hold after everything landed: the project
of the tests that replay a batch after a crash, in-process with the commit fault seam
(tests/session/test_commit_fault_replay.py) and with real SIGKILLs
(tests/processes/kill/test_killed_on_commit.py).

Two landed sources: events (id, kind) and a change feed of patients (mrn, ward, op, lsn).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from python_runners.testing.cdc_reference import scd1, scd2

EVENTS = "{{ source('landing', 'events') }}"
CDC = """{{{{ config(
    materialized='cdc_table', keys=['mrn'], sequence_by='lsn', stored_as='{stored_as}',
    apply_as_deletes="op = 'D'", except_columns=['op']
) }}}}
select mrn, ward, op, lsn from {{{{ source('landing', 'patient_changes') }}}}"""
MODELS = {
    "appended": f"select id, kind from {EVENTS}",
    "kind_totals": (
        "{{ config(output_mode='complete') }}\n"
        f"select kind, count(*) as n, sum(id) as id_sum from {EVENTS} group by kind"
    ),
    "kind_latest": (
        "{{ config(output_mode='update', unique_key='kind') }}\n"
        f"select kind, count(*) as n, max(id) as last_id from {EVENTS} group by kind"
    ),
    "patients": CDC.format(stored_as="scd1"),
    "patient_history": CDC.format(stored_as="scd2"),
}
STORED = ["mrn", "ward", "lsn"]
HISTORY = [*STORED, "__start_at", "__end_at"]


def sources(prefix: str, more: str = "") -> str:
    """The sources.yml: landing folders named `<prefix>_events` and `<prefix>_changes`; `more`:
    further tables of the `landing` source, as YAML list items."""
    return f"""
version: 2
sources:
  - name: landing
    tables:
      - name: events
        meta:
          stream: {{format: json, path: {prefix}_events, create_path: true, schema: "id bigint, kind string"}}
      - name: patient_changes
        meta:
          stream:
            format: json
            path: {prefix}_changes
            create_path: true
            schema: mrn bigint, ward string, op string, lsn bigint
{more}"""


def is_delete(change) -> bool:
    return change["op"] == "D"


def by_kind(events: list[dict]) -> dict[str, list[int]]:
    return {kind: [e["id"] for e in events if e["kind"] == kind] for kind in sorted({e["kind"] for e in events})}


def as_rows(rows: list[dict], columns: list[str]) -> list[tuple]:
    return sorted(tuple(row[column] for column in columns) for row in rows)


Landed = Mapping[str, list[dict]]  # "events" and "changes": every row landed so far


@dataclass(frozen=True)
class WriteKind:
    write: str  # the kind of write, as a test's id
    model: str
    columns: list[str]
    expected: Callable[[Landed], list[tuple]]  # the table's rows (those columns), sorted


WRITE_KINDS = [
    WriteKind("append", "appended", ["id", "kind"], lambda landed: as_rows(landed["events"], ["id", "kind"])),
    WriteKind("complete", "kind_totals", ["kind", "n", "id_sum"], lambda landed: [
        (kind, len(ids), sum(ids)) for kind, ids in by_kind(landed["events"]).items()]),
    WriteKind("update (MERGE)", "kind_latest", ["kind", "n", "last_id"], lambda landed: [
        (kind, len(ids), max(ids)) for kind, ids in by_kind(landed["events"]).items()]),
    WriteKind("cdc scd1", "patients", STORED, lambda landed: as_rows(
        scd1(landed["changes"], ["mrn"], ["lsn"], is_delete, STORED), STORED)),
    WriteKind("cdc scd2", "patient_history", HISTORY, lambda landed: as_rows(
        scd2(landed["changes"], ["mrn"], ["lsn"], is_delete, STORED), HISTORY)),
]


def table_rows(spark, location: str, columns: list[str]) -> list[tuple]:
    return sorted(tuple(row) for row in spark.read.format("delta").load(location).select(*columns).collect())
