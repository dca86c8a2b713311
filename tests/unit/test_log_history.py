"""Where a table's Delta log is cut (lifecycle/log_history.py): at a checkpoint old enough, never
the latest, never after the first version a reader has not read."""

from __future__ import annotations

from dbt_spark_streaming.lifecycle.log_history import _last_version, cut_version, doomed_names

NOW = 10_000.0


def log(*checkpoints: int, last: int = 60) -> list[str]:
    names = ["_last_checkpoint", "_commits", ".00000000000000000000.json.crc"]
    names += [f"{v:020d}.json" for v in range(last + 1)] + [f"{v:020d}.crc" for v in range(last + 1)]
    return names + [f"{v:020d}.checkpoint.parquet" for v in checkpoints]


def committed_at(version: int) -> float:
    return NOW - (60 - version) * 10.0  # a commit every 10 s, the last (60) now


def test_the_cut_is_the_newest_checkpoint_older_than_the_retention_but_not_the_latest():
    names = log(10, 20, 30, 40, 50, 60)
    assert cut_version(names, 0.0, None, committed_at, NOW) == 50
    assert cut_version(names, 150.0, None, committed_at, NOW) == 40  # 40 was committed 200 s ago
    assert cut_version(names, 10_000.0, None, committed_at, NOW) is None
    assert cut_version(log(60), 0.0, None, committed_at, NOW) is None


def test_the_cut_keeps_what_the_slowest_reader_has_not_read():
    names = log(10, 20, 30, 40, 50, 60)
    assert cut_version(names, 0.0, 35, committed_at, NOW) == 30
    assert cut_version(names, 0.0, 30, committed_at, NOW) == 30  # its checkpoint rebuilds version 30
    assert cut_version(names, 0.0, 9, committed_at, NOW) is None
    assert cut_version(names, 0.0, 40, lambda version: None, NOW) is None  # no commit time: kept


def test_only_the_logs_versioned_files_are_counted_a_compaction_by_its_last_version():
    assert _last_version("00000000000000000007.json") == 7
    assert _last_version(".00000000000000000007.json.crc") == 7
    assert _last_version("00000000000000000007.checkpoint.parquet") == 7
    assert _last_version("00000000000000000010.00000000000000000019.compacted.json") == 19
    assert _last_version("_last_checkpoint") is None and _last_version("_sidecars") is None


def test_the_files_before_the_cut_go_oldest_first_with_a_stale_checksum_of_the_last_checkpoint():
    names = log(10, 20) + ["._last_checkpoint.crc", ".00000000000000000001.json.crc"]
    doomed = doomed_names(names, 10)
    assert doomed[:3] == [".00000000000000000000.json.crc", "00000000000000000000.crc",
                          "00000000000000000000.json"]
    assert {_last_version(name) for name in doomed[:-1]} == set(range(10))
    assert doomed[-1] == "._last_checkpoint.crc"
    assert "00000000000000000010.checkpoint.parquet" not in doomed
    assert "_last_checkpoint" not in doomed
