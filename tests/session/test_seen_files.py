"""A file source's log of the files it took, trimmed by maintenance to those still in its folder
(adapter/dbt_spark_streaming/lifecycle/seen_files.py): Spark resumes from the trimmed log, reads
no file twice, and its next compaction stays short. Files are moved away by hand, as archive_to
does: Spark's own archiving runs on a thread of its own, done at no moment a test can wait for."""

from __future__ import annotations

import json
import os

import pytest

from dbt_spark_streaming.config.maintenance import Maintenance
from dbt_spark_streaming.lifecycle import seen_files
from dbt_spark_streaming.lifecycle.maintenance import Upkeep, maintain

COMPACT_EVERY = 5  # Spark's default is 10: fewer batches make the same log


@pytest.fixture
def compacting_every_five(spark, monkeypatch):
    key = "spark.sql.streaming.fileSource.log.compactInterval"
    spark.conf.set(key, str(COMPACT_EVERY))
    monkeypatch.setattr(seen_files, "KEPT_BATCHES", 2)
    monkeypatch.setattr(seen_files, "MIN_DROPPED", 1)
    yield
    spark.conf.unset(key)


def land(folder, first: int, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(first, first + count):
        path = folder / f"{number:03d}.json"
        path.write_text(json.dumps({"id": number}) + "\n")
        os.utime(path, (1_800_000_000 + number, 1_800_000_000 + number))  # the newest is the last


def ingest(spark, landing, table, checkpoint) -> None:
    """One availableNow run, a file a batch."""
    (spark.readStream.name("input").format("json").schema("id int").option("maxFilesPerTrigger", 1).load(str(landing))
     .writeStream.format("delta").option("checkpointLocation", str(checkpoint))
     .trigger(availableNow=True).start(str(table)).awaitTermination())


def compacted_entries(checkpoint) -> list[int]:
    log = checkpoint / "sources" / "input"
    newest = max((path for path in log.iterdir() if path.name.endswith(".compact")),
                 key=lambda path: int(path.name.split(".")[0]))
    return [json.loads(line)["batchId"] for line in newest.read_text().split("\n")[1:]]


def test_the_trimmed_log_resumes_with_every_file_once(spark, tmp_path, compacting_every_five):
    landing, archive = tmp_path / "landing", tmp_path / "archive"
    table, checkpoint = tmp_path / "table", tmp_path / "checkpoint"
    land(landing, 0, 12)
    ingest(spark, landing, table, checkpoint)
    assert len(compacted_entries(checkpoint)) == 10  # the compaction at batch 9 holds 0..9
    archive.mkdir()
    for moved in sorted(landing.iterdir())[4:]:  # as archive_to would; 000-003 stay in the folder
        moved.rename(archive / moved.name)

    done = maintain(spark, Upkeep("ingest", "ingest", str(table), Maintenance(), checkpoint=str(checkpoint)),
                    readers={}, vacuum=False)

    # 004-008; 009 is the compaction's newest file, 010 and 011 the last two batches'
    assert done.files_forgotten == 5
    assert "forgot 5 landed files" in done.said()
    assert compacted_entries(checkpoint) == [0, 1, 2, 3, 9]

    land(landing, 12, 8)  # batches 12..19: compactions at 14 and 19, built from the trimmed one
    ingest(spark, landing, table, checkpoint)

    ids = [row.id for row in spark.read.format("delta").load(str(table)).collect()]
    assert sorted(ids) == list(range(20))  # 000-003, still in the folder, not read again
    assert compacted_entries(checkpoint) == [0, 1, 2, 3, *range(9, 20)]
