"""The empty batch planned past a Delta source's initial snapshot
(adapter/dbt_spark_streaming/sources/initial_snapshot.py): its offset-log entry, from the last batch's."""

from __future__ import annotations

import json
import time

from dbt_spark_streaming.sources.initial_snapshot import _next_entry, started_in_initial_snapshot

DELTA = '{"sourceVersion":1,"reservoirId":"r","reservoirVersion":5,"index":-1,"isStartingVersion":false}'
FILES = '{"logOffset":3}'


def entry(watermark_ms: int, *sources: str) -> list[str]:
    return ["v1", json.dumps({"batchWatermarkMs": watermark_ms, "batchTimestampMs": 1, "conf": {"a": "b"}}),
            *sources]


def test_the_next_entry_keeps_every_source_offset_and_the_metadata():
    before = int(time.time() * 1000)
    lines = _next_entry(entry(0, DELTA, FILES), ["v1", '{"nextBatchWatermarkMs":0}']).split("\n")
    assert lines[0] == "v1" and lines[2:] == [DELTA, FILES]
    metadata = json.loads(lines[1])
    assert metadata["conf"] == {"a": "b"} and metadata["batchWatermarkMs"] == 0
    assert metadata["batchTimestampMs"] >= before


def test_the_watermark_is_the_one_the_last_batch_committed_never_earlier():
    committed = ["v1", '{"nextBatchWatermarkMs":7000}']
    assert json.loads(_next_entry(entry(5000, DELTA), committed).split("\n")[1])["batchWatermarkMs"] == 7000
    assert json.loads(_next_entry(entry(9000, DELTA), committed).split("\n")[1])["batchWatermarkMs"] == 9000


def test_a_commit_without_a_watermark_leaves_the_batchs():
    for commit in (["v1"], ["v1", "{}"], ["v1", "not json"]):
        assert json.loads(_next_entry(entry(4000, DELTA), commit).split("\n")[1])["batchWatermarkMs"] == 4000


def test_an_offset_line_that_is_not_json_is_not_a_delta_source():
    assert not started_in_initial_snapshot(None, entry(0, "not json", "-"))
