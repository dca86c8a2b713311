"""A full refresh and the models that stream from the rebuilt one.

A reader's checkpoint remembers the upstream Delta table it streams from. A full refresh drops
and recreates that table, so every reader not rebuilt in the same run would fail on its next run.
`plan` looks at dbt's graph before anything is dropped and either refuses, naming the readers
and the command that rebuilds them too, or says how to refresh:

- every reader is rebuilt in this run too (selected, and not `full_refresh: false`): drop and
  recreate as always;
- the readers left alone all follow rewrites of their upstream: `stream_appends(ref(...))`
  (Delta's skipChangeCommits) skips the commit that empties it and reads the rebuilt rows as new
  rows; `stream_changes(ref(...))` (the change data feed) reads a delete for every old row, then
  the rebuilt rows as inserts. The table is then emptied in place instead of dropped, so its Delta
  identity, which their checkpoints hold, stays.

Readers are found transitively: a reader rebuilt in this run has readers of its own.
`reset` then clears the model: its table, the tables kept beside it and its checkpoint go
together, so that it starts over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from pyspark.sql import SparkSession

from dbt_spark_streaming.config.materializations import STREAM_MATERIALIZATIONS
from dbt_spark_streaming.config.stream_reads import reads_of, stream_reads
from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.lifecycle import checkpoints, redeploy
from dbt_spark_streaming.sources import corrupt_lines


@dataclass(frozen=True)
class Reader:
    name: str
    unique_id: str
    follows_rewrites: bool
    rebuilt: bool  # in this run: selected and not `full_refresh: false`


@dataclass(frozen=True)
class FullRefreshPlan:
    in_place: bool  # empty the table instead of dropping it (its readers continue)
    readers: tuple[Reader, ...] = ()


def plan(model: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]], selected: Iterable[str]) -> FullRefreshPlan:
    """How to full-refresh `model` (a dbt node), given the graph's nodes and the run's selected
    unique ids; a StreamingModelError when readers would be left to fail."""
    selected = set(selected)
    readers = tuple(_direct_readers(model, nodes, selected))
    stranded = [reader for reader in readers if not reader.rebuilt and not reader.follows_rewrites]
    stranded += _stranded_below(readers, nodes, selected)
    if stranded:
        raise StreamingModelError(_refusal(model["name"], stranded))
    return FullRefreshPlan(in_place=any(not reader.rebuilt for reader in readers), readers=readers)


def _direct_readers(model: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]], selected: set[str]):
    """The streaming models that stream from `model`, in their own SQL or in an ephemeral model's
    that dbt inlines into theirs."""
    for unique_id, node, reads in _streams_of(model["unique_id"], model["name"], nodes):
        yield Reader(
            name=node["name"], unique_id=unique_id,
            follows_rewrites=all(read.follows_rewrites for read in reads),
            rebuilt=unique_id in selected and (node.get("config") or {}).get("full_refresh") is not False,
        )


def _streams_of(upstream_id: str, upstream: str, nodes: Mapping[str, Mapping[str, Any]], reads_above=()):
    for unique_id, node in nodes.items():
        if node.get("resource_type") != "model" or upstream_id not in _depends_on(node):
            continue
        # A model selecting from an ephemeral model streams whatever that one streams.
        reads = list(reads_above) or reads_of(str(node.get("raw_code") or ""), upstream)
        materialized = (node.get("config") or {}).get("materialized")
        if materialized == "ephemeral" and reads:
            yield from _streams_of(unique_id, node["name"], nodes, tuple(reads))
        elif materialized in STREAM_MATERIALIZATIONS and reads:
            yield unique_id, node, reads


def follows_changes(read: str) -> bool:
    """A read (one of stream_reads_of's) of a table's change data feed: it reads a rewrite as
    deletes and inserts."""
    return any(parsed.follows_changes for parsed in stream_reads(read))


def stream_reads_of(sql: str, model: str) -> list[str]:
    """Each streaming read of `model` in a model's SQL, with the options after it:
    `stream({{ ref('m') }}) with (...)`, `{{ stream_appends(ref('m')) }}`, `{{ stream_changes(...) }}`."""
    return [read.text for read in reads_of(sql, model)]




def _stranded_below(readers: Iterable[Reader], nodes: Mapping[str, Mapping[str, Any]], selected: set[str]) -> list[Reader]:
    """Readers, at any depth below the rebuilt ones, neither rebuilt nor able to continue."""
    stranded, seen, pending = [], set(), [reader for reader in readers if reader.rebuilt]
    while pending:
        reader = pending.pop()
        if reader.unique_id in seen:
            continue
        seen.add(reader.unique_id)
        for below in _direct_readers(nodes[reader.unique_id], nodes, selected):
            if below.rebuilt:
                pending.append(below)
            elif not below.follows_rewrites:
                stranded.append(below)
    return stranded


def _depends_on(node: Mapping[str, Any]) -> list[str]:
    return list((node.get("depends_on") or {}).get("nodes") or [])


def _refusal(model: str, readers: list[Reader]) -> str:
    names = ", ".join(sorted({reader.name for reader in readers}))
    return (
        f"Model {model}: --full-refresh would drop and rebuild its table, and these models stream "
        f"from it (or from a model rebuilt with it) and would not be rebuilt in this run: {names}. "
        f"Their checkpoints point at the old table, so their next run would fail. Rebuild them "
        f"together: `dbt run --full-refresh --select {model}+`. A reader that should instead "
        f"continue over the rebuilt table reads it with `{{{{ stream_appends(ref('{model}')) }}}}` "
        f"(the rebuilt rows arrive as new rows) or `{{{{ stream_changes(ref('{model}')) }}}}` (a "
        f"delete for each old row, then the rebuilt rows): docs/changing-models.md."
    )


def reset(spark: SparkSession, table: str, checkpoint: str, companion_tables: Iterable[str], in_place: bool) -> None:
    """The model's table (emptied when `in_place`, so that the readers that continue over it keep
    streaming from the same Delta table; else dropped), the tables kept beside it, its checkpoint
    (or load log), the unreadable lines it kept of its json/csv sources with their queries'
    checkpoints (sources/corrupt_lines.py), and whatever a redeploy left."""
    companion_tables = list(companion_tables)
    if in_place and spark.catalog.tableExists(table):
        delta_tables.empty(spark, table)
    else:
        delta_tables.drop_if_exists(spark, table)
    for companion in (*companion_tables, corrupt_lines.table_of(table)):
        delta_tables.drop_if_exists(spark, companion)
    checkpoints.delete(spark, checkpoint)
    checkpoints.delete(spark, corrupt_lines.checkpoint_of(checkpoint))
    redeploy.forget(spark, table, checkpoint, companion_tables)
