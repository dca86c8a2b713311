"""Ties: two different changes of one key with the same sequence_by value.

sequence_by orders a key's changes; two changes at one sequence value cannot be ordered by it, and
keeping one silently would drop the other unseen. A repeat of the same change (every stored
column and the delete flag equal) is no tie: it is one change delivered twice, a no-op.

What happens is the model's on_sequence_tie (changes.py):
- 'fail' (the default): the batch stops before anything is written, naming the key and the
  sequence value; the checkpoint does not record it, so the next run reads it again.
- 'keep_last_landed': the change that landed last is kept and the others are counted (the run
  line, `_stream_progress.cdc_changes_tied`). A change in a later micro-batch landed after the
  table's: it replaces the one stored with its sequence. Within one micro-batch Spark reads the
  batch's files together and keeps no landing order, so there the winner is the greatest change,
  compared column by column in the table's column order (nulls first): the same on every replay
  of the batch, after a kill too.

Ties are found within the batch (change_rows.py) and against what the table holds for the
batch's keys at the same sequence value (scd1: the key's current row and its last delete; scd2:
the versions and deletes in its history). Under 'fail', scd1 lets its MERGE find a tie with the
table's row (a first clause that raises, raise_tie) instead of reading the table once more to
look for one: the check then costs no scan of its own (bench/cdc/).
"""

from __future__ import annotations

import json
import re
from typing import Optional, Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from dbt_spark_streaming.delta import tables as delta_tables
from dbt_spark_streaming.jvm import hadoop_fs
from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.progress import batch_notes
from dbt_spark_streaming.writes.batch_marks import recorded_batch_in

# The batch's count rides on its MERGE's commit (userMetadata), so that a batch replayed after a
# kill, whose MERGE Delta skips as already committed, still reports what its first attempt left out.
USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
TIED = "__tied"  # an arriving change that ties with the table's change at its sequence
NOTE = batch_notes.CDC_CHANGES_TIED


def compared_columns(shape) -> list[str]:
    """The stored columns that tell two changes apart: scd2 with tracked columns compares those
    (an untracked column of a version may have been updated after its start since)."""
    return list(shape.tracked) if shape.changes.tracks_some_columns else list(shape.values)


def values_differ(shape, arriving: str, known: str) -> Column:
    """The compared columns of `arriving` and `known` (struct or table aliases) differ; with
    ignore_null_updates an arriving null means "unchanged", not a different value."""
    differ = F.lit(False)
    for column in compared_columns(shape):
        new, old = F.col(f"{arriving}.`{column}`"), F.col(f"{known}.`{column}`")
        different = ~new.eqNullSafe(old)
        if shape.changes.ignore_null_updates:
            different = new.isNotNull() & different
        differ = differ | different
    return differ


def differs(shape, arriving: str, known: str, delete: str) -> Column:
    """`arriving` and `known` (struct columns of the compared values and the delete flag) are
    different changes."""
    flag_differs = F.col(f"{arriving}.{delete}") != F.col(f"{known}.{delete}")
    return flag_differs | (~F.col(f"{arriving}.{delete}") & values_differ(shape, arriving, known))


def with_table_ties(arriving: DataFrame, known: DataFrame, shape, seq: str, delete: str) -> DataFrame:
    """`arriving` with TIED set on each change whose key and sequence the table holds as a
    different change (`known`: keys, the compared columns, `seq`, `delete`)."""
    keys = list(shape.changes.keys)
    compared = [*compared_columns(shape), delete]
    as_struct = lambda frame, name: frame.select(  # noqa: E731
        *keys, seq, F.struct(*[F.col(f"`{c}`") for c in compared]).alias(name)
    )
    tied = (
        as_struct(arriving, "__arriving").join(as_struct(known, "__known"), [*keys, seq])
        .filter(differs(shape, "__arriving", "__known", delete))
        .select(*keys, seq).distinct().withColumn(TIED, F.lit(True))
    )
    return arriving.join(tied, [*keys, seq], "left").withColumn(TIED, F.coalesce(F.col(TIED), F.lit(False)))


def tied_count() -> Column:
    """The changes marked TIED, as an aggregate: observed on the frame that checkpoints them, it
    gives settle its count with no job of its own."""
    return F.count(F.when(F.col(TIED), 1)).alias("tied_with_table")


def settle(source: DataFrame, batch, shape, seq: str, app_id: str, batch_id: int,
           tied_with_table: Optional[int] = None) -> None:
    """After the batch's changes were matched with the table's (a checkpointed `source` with
    TIED): stop on a tie under 'fail'; else count every change a tie left out. The count of
    TIED is counted here unless already known (`tied_with_table`, observed: tied_count)."""
    keys = list(shape.changes.keys)
    with_table = source.filter(F.col(TIED))
    if tied_with_table is None:
        tied_with_table = with_table.count()
    if tied_with_table and shape.changes.on_sequence_tie == "fail":
        refuse(shape.changes.model, tied_with_table, "of this batch and the table",
               example(keys, seq, with_table))
    count(app_id, batch_id, batch.tied + tied_with_table, source.sparkSession)


def example(keys: Sequence[str], seq: str, frame: DataFrame) -> str:
    """One tied key and sequence, as text: the smallest, so the message is the same each time."""
    found = frame.select(F.min(F.to_json(F.struct(*[F.col(k) for k in keys], F.col(seq).alias("sequence_by")))))
    return found.first()[0] or ""


def refuse(model: str, count: int | str, where: str, tie: str) -> None:
    raise StreamingModelError(
        f"Model {model}: {count} change(s) {where} tie with a different change of the same key "
        f"at the same sequence_by value, so which one is the latest cannot be told: {tie}. The "
        f"batch was not written and the checkpoint did not record it (on_sequence_tie is "
        f"'fail', the default). Fix the feed so that each change of a key has a sequence of its "
        f"own (or add a tie-breaking column to sequence_by, compared in order: "
        f"sequence_by=['lsn', '<tie-breaker>']), or set on_sequence_tie='keep_last_landed' to "
        f"keep the change that landed last and count the others; then run again."
    )


def count(app_id: str, batch_id: int, tied: int, session: Optional[SparkSession] = None) -> None:
    """Kept for the run line and the progress table (read by query id and batch id), and on the
    commits the batch makes in `session` (cleared by apply_changes after the batch)."""
    batch_notes.add(app_id, batch_id, NOTE, tied)
    if session is not None and tied:
        session.conf.set(USER_METADATA, json.dumps({NOTE: tied}))


def recorded_by_earlier_attempt(spark: SparkSession, table: str, app_id: str, batch_id: int) -> Optional[int]:
    """The count the batch's MERGE recorded if the table's latest commit is that batch's (a kill
    came between the MERGE and the checkpoint's commit); None otherwise."""
    log_folder, version = delta_tables.log_folder_and_version(spark, delta_tables.location(spark, table))
    if version < 0:
        return None
    actions = [json.loads(line) for line in
               hadoop_fs.read_text(spark, f"{log_folder.rstrip('/')}/{version:020d}.json").splitlines()]
    if recorded_batch_in(actions) != (app_id, batch_id):
        return None
    for action in actions:
        recorded = action.get("commitInfo", {}).get("userMetadata") or ""
        if NOTE in recorded:
            return int(json.loads(recorded)[NOTE])
    return 0


_RAISED = "sequence_by tie with the table: "


def raise_tie(keys: Sequence[Column], sequence: Column) -> Column:
    """What a MERGE clause sets when the batch's change ties with the table's row: an error
    (the MERGE then commits nothing), naming the key and the sequence."""
    return F.raise_error(F.concat(F.lit(_RAISED), F.to_json(F.struct(*keys, sequence.alias("sequence_by")))))


def executing(merge, model: str) -> None:
    """Run the MERGE; a tie it raised (raise_tie) stops the batch with the model's message."""
    try:
        merge.execute()
    except Exception as error:  # pyspark's captured error, or py4j's
        found = re.search(re.escape(_RAISED) + r"(\{.*?\})", str(error))
        if found is None:
            raise
        refuse(model, "at least 1", "of this batch and the table", found[1])
