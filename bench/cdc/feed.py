"""The change feed `python -m bench.cdc` applies: a table of `keys` keys loaded in bulk, then batches
that each change a share of them, and what the SCD1 and SCD2 tables must hold afterwards.

Every key k starts with one row at lsn 10*(k+1). A batch's changes take sequence numbers from a
clock that only moves forward in steps of 10 (above every loaded lsn), so the only changes older
than the row they meet are the late ones, at the key's current lsn - 1. Per batch, each changed
key distinct (shares of the changed keys):
- updates of live keys (the rest),
- UPDATE_TWICE: two updates of one key in the same batch (two SCD2 versions),
- DELETES of live keys,
- INSERTS of new keys,
- LATE: an update older than the key's current row (SCD1 drops it; SCD2 puts a version before
  the current one and shortens the one before it),
- and REPEATS (a share of the changed keys, as extra rows): changes of the batch before sent
  again unchanged, which both tables take as no-ops.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

FEED_SCHEMA = "key bigint, ward string, status string, score double, op string, lsn bigint"
FEED_COLUMNS = ["key", "ward", "status", "score", "op", "lsn"]
CONFIG = {"keys": ["key"], "sequence_by": "lsn", "apply_as_deletes": "op = 'D'", "except_columns": ["op"]}
WARDS = 12
STATUSES = ("admitted", "observation", "transferred", "discharged")

UPDATE_TWICE, DELETES, INSERTS, LATE, REPEATS = 0.03, 0.05, 0.05, 0.02, 0.01


def loaded_lsn(key: int) -> int:
    return 10 * (key + 1)


@dataclass
class ChangeFeed:
    keys: int  # loaded: 0..keys-1, one row each
    changed_keys: int  # distinct keys a batch changes
    rng: random.Random
    next_key: int = -1
    clock: int = -1
    current_lsn: dict[int, int] = field(default_factory=dict)  # keys changed since the load
    deleted: set[int] = field(default_factory=set)
    late_sent: set[int] = field(default_factory=set)
    previous: list[tuple] = field(default_factory=list)
    # What the tables must hold: SCD1 one row per live key; SCD2 every version, one current per live key.
    live_keys: int = 0
    live_lsn_sum: int = 0
    scd2_rows: int = 0

    def __post_init__(self) -> None:
        self.next_key = self.keys
        self.clock = loaded_lsn(self.keys)
        self.live_keys = self.scd2_rows = self.keys
        self.live_lsn_sum = sum(loaded_lsn(key) for key in range(self.keys))

    def counts(self) -> dict[str, int]:
        """How many keys of each kind a batch changes (distinct keys), and the repeated rows."""
        c = self.changed_keys
        kinds = {name: max(1, round(c * share)) for name, share in
                 (("update_twice", UPDATE_TWICE), ("delete", DELETES), ("insert", INSERTS), ("late", LATE))}
        kinds["update"] = max(0, c - sum(kinds.values()))
        kinds["repeat"] = max(1, round(c * REPEATS))
        return kinds

    def rows_per_batch(self) -> int:
        kinds = self.counts()
        return sum(kinds.values()) + kinds["update_twice"]

    def _tick(self) -> int:
        self.clock += 10
        return self.clock

    def _lsn(self, key: int) -> int:
        return self.current_lsn.get(key, loaded_lsn(key))

    def _values(self) -> tuple:
        rng = self.rng
        return f"W{rng.randrange(WARDS):02d}", rng.choice(STATUSES), round(rng.random() * 100, 2)

    def _live_keys(self, count: int, taken: set[int], fresh_lsn: bool = False) -> list[int]:
        chosen = []
        while len(chosen) < count:
            key = self.rng.randrange(self.next_key)
            if key in taken or key in self.deleted or (fresh_lsn and key in self.late_sent):
                continue
            taken.add(key)
            chosen.append(key)
        return chosen

    def _set_lsn(self, key: int, lsn: int) -> None:
        self.live_lsn_sum += lsn - self._lsn(key)
        self.current_lsn[key] = lsn

    def next_batch(self) -> list[tuple]:
        """The next batch's rows (FEED_COLUMNS), in a shuffled order; the expectations follow it."""
        kinds = self.counts()
        taken: set[int] = set()
        rows: list[tuple] = []
        repeats = self.rng.sample(self.previous, min(kinds["repeat"], len(self.previous)))
        for key in self._live_keys(kinds["late"], taken, fresh_lsn=True):
            rows.append((key, *self._values(), "U", self._lsn(key) - 1))
            self.late_sent.add(key)
            self.scd2_rows += 1
        for key in self._live_keys(kinds["delete"], taken):
            rows.append((key, None, None, None, "D", self._tick()))
            self.live_lsn_sum -= self._lsn(key)
            self.deleted.add(key)
            self.live_keys -= 1
        for key in self._live_keys(kinds["update"], taken):
            lsn = self._tick()
            rows.append((key, *self._values(), "U", lsn))
            self._set_lsn(key, lsn)
            self.scd2_rows += 1
        for key in self._live_keys(kinds["update_twice"], taken):
            first, second = self._tick(), self._tick()
            rows += [(key, *self._values(), "U", second), (key, *self._values(), "U", first)]
            self._set_lsn(key, second)
            self.scd2_rows += 2
        for key in range(self.next_key, self.next_key + kinds["insert"]):
            lsn = self._tick()
            rows.append((key, *self._values(), "I", lsn))
            self.current_lsn[key] = lsn
            self.live_lsn_sum += lsn
            self.live_keys += 1
            self.scd2_rows += 1
        self.next_key += kinds["insert"]
        self.previous = list(rows)
        rows += repeats
        self.rng.shuffle(rows)
        return rows


def bootstrap_rows() -> list[tuple]:
    """A delete of a key that never existed: the first batch, so the queries' checkpoints hold
    progress before the tables are loaded in bulk (a table with rows and no checkpoint is refused)."""
    return [(-1, None, None, None, "D", 1)]


def append_changes(spark: SparkSession, table: str, rows: list[tuple]) -> None:
    spark.createDataFrame(rows, FEED_SCHEMA).write.format("delta").mode("append").saveAsTable(table)


def loaded_rows(spark: SparkSession, keys: int, schema: StructType, files: int, scd2: bool) -> DataFrame:
    """One current row per key 0..keys-1 in the table's schema (FeedShape.table_schema())."""
    status = F.element_at(F.array(*[F.lit(s) for s in STATUSES]), (F.col("id") % len(STATUSES) + 1).cast("int"))
    rows = spark.range(keys, numPartitions=files).select(
        F.col("id").alias("key"),
        F.format_string("W%02d", (F.col("id") % WARDS).cast("int")).alias("ward"),
        status.alias("status"),
        ((F.col("id") % 10_000) / 100).alias("score"),
        (F.lit(10) * (F.col("id") + 1)).alias("lsn"),
    )
    if scd2:
        rows = rows.withColumn("__start_at", F.col("lsn")).withColumn("__end_at", F.lit(None))
    return rows.select(*[F.col(field.name).cast(field.dataType) for field in schema.fields])
