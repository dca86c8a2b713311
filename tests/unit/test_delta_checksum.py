"""A Delta table's latest version and metadata read from its checksum file (delta/log.py), without
a JVM: what a model with nothing new reads of its table instead of opening Delta's log handle."""

from __future__ import annotations

import json
from pathlib import Path

from dbt_spark_streaming.delta.log import latest_from_checksum

METADATA = {"id": "t-1", "configuration": {"streaming.generation": "2"}, "partitionColumns": []}


def commit(log: Path, version: int, checksum: dict | None) -> None:
    log.mkdir(parents=True, exist_ok=True)
    (log / f"{version:020d}.json").write_text(json.dumps({"commitInfo": {}}) + "\n")
    if checksum is not None:
        (log / f"{version:020d}.crc").write_text(json.dumps(checksum))


def test_the_latest_commits_checksum_gives_version_and_metadata(tmp_path):
    log = tmp_path / "_delta_log"
    commit(log, 0, {"metadata": {**METADATA, "configuration": {}}})
    commit(log, 1, {"metadata": METADATA, "numFiles": 3})
    assert latest_from_checksum(None, f"file:{tmp_path}") == (1, METADATA)


def test_a_latest_commit_without_checksum_is_left_to_delta(tmp_path):
    log = tmp_path / "_delta_log"
    commit(log, 0, {"metadata": METADATA})
    commit(log, 1, None)  # being written, or a writer that writes none: version 0's would be stale
    assert latest_from_checksum(None, str(tmp_path)) is None


def test_an_unreadable_checksum_or_no_log_is_left_to_delta(tmp_path):
    log = tmp_path / "_delta_log"
    assert latest_from_checksum(None, str(tmp_path)) is None
    commit(log, 0, None)
    (log / f"{0:020d}.crc").write_text("{not json")
    assert latest_from_checksum(None, str(tmp_path)) is None
    (log / f"{0:020d}.crc").write_text(json.dumps({"numFiles": 1}))  # no metadata in it
    assert latest_from_checksum(None, str(tmp_path)) is None
