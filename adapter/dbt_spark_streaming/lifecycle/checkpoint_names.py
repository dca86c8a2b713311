"""A checkpoint written before streaming sources had names, given its query's names in place.

Spark 4.2 keys a checkpoint's offsets by source name (offset log version 2), and keeps each
source's own log in `sources/<name>`, so that a query can gain, lose or reorder sources and
keep the others' progress. A checkpoint written by Spark 4.1 (or by 4.2 without names) numbers
its sources instead: offset lines in the order of the query's sources and logs in `sources/0`,
`sources/1`, ... Spark does not convert one: started with names on it, the query fails
(`batch <n> doesn't exist`), and a query whose checkpoint kept version 1 could never add a
source.

`adopt_names`, called on a model's run before anything reads its checkpoint (even a run with
nothing new, so that a model can change its inputs on the next), and before each query starts,
converts it once, for the query's own inputs, which must be the checkpoint's (same count, same
order: positions are all a checkpoint from before names has to tell them apart):

1. each numbered source log is renamed to its source's name;
2. each offsets entry, oldest first, is rewritten as version 2: `<name>:<offset>` lines, and
   the source-naming setting on in its recorded settings (Spark restores those from the
   checkpoint, and keys offsets by position without it).

The last entry is converted last, so a checkpoint whose last entry is still version 1 is still
to convert: a run killed half-way converts the rest on the next start (each step skips what is
done). Commits and state are untouched: a stateful operator's state is keyed by operator, not
by source.

`record_shuffle_partitions` works around a gap in Spark 4.2's named entries (see there); both
run in `prepare`, before a model's query starts, and find nothing to do once done.
"""

from __future__ import annotations

import json
from typing import Callable, Sequence

from pyspark.sql import SparkSession

from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.jvm import checkpoint_log, hadoop_fs
from dbt_spark_streaming.jvm.checkpoint_log import (
    NAMED_VERSION, OFFSETS, SHUFFLE_PARTITIONS, SOURCE_NAMING, entry, entry_metadata, folder, last_batch,
    names_sources, record_shuffle_partitions, source_offsets,
)
from dbt_spark_streaming.jvm.plans import StreamingInput


# Checkpoints found ready in this process (named, their partitions recorded): a served model
# starts a query at every run, and a ready checkpoint stays ready.
_ready: set[str] = set()


def ready(spark: SparkSession, checkpoint: str) -> bool:
    """Whether the checkpoint needs nothing before its query starts: no entry yet, or a last
    entry that is named and records its shuffle partitions. Not read again once this process
    found it ready."""
    if checkpoint in _ready:
        return True
    last = last_batch(spark, checkpoint, OFFSETS)
    if last is None:
        return True
    lines = entry(spark, checkpoint, OFFSETS, last)
    if not names_sources(lines) or SHUFFLE_PARTITIONS not in entry_metadata(lines).get("conf", {}):
        return False
    _ready.add(checkpoint)
    return True


def clear_unfinished_first_entry(spark: SparkSession, checkpoint: str) -> None:
    """checkpoint_log.clear_unfinished_first_entry, unless this process found the checkpoint
    ready: that one has entries, and a served model starts a query at every run (on an object
    store each look is a LIST request). Call it after prepare_before_start."""
    if checkpoint not in _ready:
        checkpoint_log.clear_unfinished_first_entry(spark, checkpoint)


def forget(checkpoint: str) -> None:
    """The checkpoint was replaced by an older one (a rollback): it may be from before names."""
    _ready.discard(checkpoint)


def prepare_before_start(spark: SparkSession, model: str, checkpoint: str,
                         inputs_of: Callable[[], Sequence[StreamingInput]]) -> None:
    """prepare, when the checkpoint is not ready."""
    if not ready(spark, checkpoint):
        prepare(spark, model, checkpoint, inputs_of)
        _ready.add(checkpoint)


def prepare(spark: SparkSession, model: str, checkpoint: str,
            inputs_of: Callable[[], Sequence[StreamingInput]]) -> None:
    """adopt_names, then record_shuffle_partitions; `inputs_of`: the query's inputs, asked for
    only when the checkpoint has names to adopt."""
    last = last_batch(spark, checkpoint, OFFSETS)
    if last is None:
        return
    if not names_sources(entry(spark, checkpoint, OFFSETS, last)):
        adopt_names(spark, model, checkpoint, inputs_of())
    record_shuffle_partitions(spark, checkpoint)


def adopt_names(spark: SparkSession, model: str, checkpoint: str, inputs: Sequence[StreamingInput]) -> bool:
    """Convert `checkpoint` to named sources for a query reading `inputs` (in Spark's order);
    False when there is nothing to convert (no checkpoint, already named, or unnamed inputs)."""
    last = last_batch(spark, checkpoint, OFFSETS)
    if last is None or names_sources(entry(spark, checkpoint, OFFSETS, last)):
        return False
    names = [found.name for found in inputs]
    if not names or not all(names):
        return False
    held = len(source_offsets(entry(spark, checkpoint, OFFSETS, last)))
    if held != len(names):
        raise StreamingModelError(
            f"Model {model}: its checkpoint {checkpoint} was written before streaming sources had "
            f"names (Spark 4.1 or older) and holds positions in {held} input(s), but the query now "
            f"reads {len(names)} ({', '.join(names)}). Such a checkpoint cannot tell which input "
            f"is which. Run the model once with its previous inputs (that run gives the checkpoint "
            f"names), then change them; or rebuild it: `dbt run --full-refresh --select {model}+`."
        )
    sources = f"{checkpoint.rstrip('/')}/sources"
    for position, name in enumerate(names):
        numbered, named = f"{sources}/{position}", f"{sources}/{name}"
        if hadoop_fs.exists(spark, numbered) and not hadoop_fs.exists(spark, named):
            hadoop_fs.rename(spark, numbered, named)
    entries = folder(checkpoint, OFFSETS)
    for batch in sorted(int(found) for found in hadoop_fs.list_names(spark, entries) if found.isdigit()):
        lines = entry(spark, checkpoint, OFFSETS, batch)
        if not names_sources(lines):
            hadoop_fs.write_atomically(spark, f"{entries}/{batch}", named_entry(lines, names), replace=True)
    return True


def named_entry(lines: Sequence[str], names: Sequence[str]) -> str:
    """A version 1 offsets entry (its lines) as version 2, its sources named `names` in order."""
    metadata = entry_metadata(lines)
    metadata.setdefault("conf", {})[SOURCE_NAMING] = "true"
    metadata.setdefault("sourceMetadataInfo", {})
    offsets = source_offsets(lines)
    body = [f"{name}:{offsets[str(position)]}" for position, name in enumerate(names)]
    return "\n".join([NAMED_VERSION, json.dumps(metadata, separators=(",", ":")), *body])
