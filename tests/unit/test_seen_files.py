"""A file source's log of the files it took, trimmed to those it can still meet
(adapter/dbt_spark_streaming/lifecycle/seen_files.py), on logs written as Spark writes them."""

from __future__ import annotations

import json
from pathlib import Path

from dbt_spark_streaming.lifecycle import seen_files

LANDED = 300  # one file a batch, batches 0..299; the compaction at 299 holds them all


def source_log(checkpoint: Path, landing: Path, present: set[int]) -> Path:
    """sources/0 with a compaction at batch 289 and one entry each in 290..299; the files
    numbered in `present` are still in the landing folder, the others moved away."""
    landing.mkdir(parents=True, exist_ok=True)
    log = checkpoint / "sources" / "0"
    log.mkdir(parents=True)
    for number in present:
        (landing / f"{number}.json").write_text("{}\n")

    def line(number: int) -> str:
        return json.dumps({"path": f"file://{landing}/{number}.json", "timestamp": 1_000 + number,
                           "batchId": number})

    (log / "289.compact").write_text("\n".join(["v1", *(line(n) for n in range(290))]))
    (log / ".289.compact.crc").write_bytes(b"stale checksum")
    for number in range(290, LANDED):
        (log / str(number)).write_text("\n".join(["v1", line(number)]))
    return log


def taken(log: Path) -> list[int]:
    version, *lines = (log / "289.compact").read_text().split("\n")
    assert version == "v1"
    return [json.loads(line)["batchId"] for line in lines]


def test_entries_of_files_moved_away_are_dropped_but_recent_batches_and_present_files_kept(tmp_path):
    log = source_log(tmp_path / "checkpoint", tmp_path / "landing", present={5, 100})

    dropped = seen_files.trim(str(tmp_path / "checkpoint"))

    recent = list(range(LANDED - seen_files.KEPT_BATCHES, 290))  # batches a replay may need
    assert taken(log) == [5, 100, *recent]
    assert dropped == 290 - len(taken(log))
    assert not (log / ".289.compact.crc").exists()  # Hadoop would check the new content against it
    assert [path.name for path in log.iterdir() if path.name.endswith(".trimmed")] == []
    assert seen_files.trim(str(tmp_path / "checkpoint")) == 0  # nothing more to forget


def test_the_newest_file_is_kept_for_the_age_spark_counts_from_it(tmp_path):
    log = source_log(tmp_path / "checkpoint", tmp_path / "landing", present=set())
    lines = (log / "289.compact").read_text().split("\n")
    newest = json.loads(lines[1])
    newest["timestamp"] = 10**13  # the first batch's file has the newest modification time
    (log / "289.compact").write_text("\n".join([lines[0], json.dumps(newest), *lines[2:]]))

    seen_files.trim(str(tmp_path / "checkpoint"))

    assert taken(log)[0] == 0


def test_a_log_with_few_entries_to_drop_is_left_as_it_is(tmp_path):
    present = set(range(290 - seen_files.MIN_DROPPED + 1))
    log = source_log(tmp_path / "checkpoint", tmp_path / "landing", present=present)
    before = (log / "289.compact").read_text()

    assert seen_files.trim(str(tmp_path / "checkpoint")) == 0
    assert (log / "289.compact").read_text() == before
    assert (log / ".289.compact.crc").exists()


def test_nothing_is_forgotten_while_the_landing_folder_itself_is_missing(tmp_path):
    log = source_log(tmp_path / "checkpoint", tmp_path / "landing", present=set())
    (tmp_path / "landing").rmdir()  # an unmounted share, say: its files are not known to be gone

    assert seen_files.trim(str(tmp_path / "checkpoint")) == 0
    assert len(taken(log)) == 290


def test_logs_that_are_not_a_file_sources_and_missing_checkpoints_are_left_alone(tmp_path):
    kafka = tmp_path / "checkpoint" / "sources" / "0"
    kafka.mkdir(parents=True)
    (kafka / "0").write_text('v1\n{"recordings":{"0":0}}')
    (kafka / "10.compact").write_text('v1\n{"recordings":{"0":0}}')

    assert seen_files.trim(str(tmp_path / "checkpoint")) == 0
    assert seen_files.trim(str(tmp_path / "nowhere")) == 0
    assert seen_files.trim(None) == 0
    assert seen_files.trim("s3a://bucket/checkpoint") == 0
