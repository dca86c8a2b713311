"""The commit fault seam (writes/commit_faults.py) without Spark: what it matches, when it fires,
and the checkpoint files it takes back for Delta's own sink."""

from __future__ import annotations

import pytest

from dbt_spark_streaming.writes import commit_faults
from dbt_spark_streaming.writes.commit_faults import InjectedCommitFault


def test_unarmed_commits_pass():
    commit_faults.committed("shop.orders")
    commit_faults.committed("/lakehouse/warehouse/shop.db/orders")


def test_it_fires_once_on_the_armed_table_by_name_or_location():
    with commit_faults.failing_after_commit("shop.orders") as armed:
        commit_faults.committed("shop.order_lines")  # another table
        commit_faults.committed("/lakehouse/warehouse/shop.db/orders_archive")
        assert not armed.fired
        with pytest.raises(InjectedCommitFault, match="shop.orders"):
            commit_faults.committed("file:/lakehouse/warehouse/shop.db/orders/")
        assert armed.fired
        commit_faults.committed("shop.orders")  # the replay commits again: no second fault
    commit_faults.committed("shop.orders")


def test_it_fires_after_the_given_commit_of_the_table():
    with commit_faults.failing_after_commit("shop.orders", after_commits=2) as armed:
        commit_faults.committed("shop.orders")
        assert armed.commits_seen == 1 and not armed.fired
        with pytest.raises(InjectedCommitFault, match="commit 2"):
            commit_faults.committed("shop.orders")


def test_a_fault_left_unfired_is_disarmed_at_the_end_of_its_block():
    with commit_faults.failing_after_commit("shop.orders"):
        pass
    commit_faults.committed("shop.orders")


def checkpoint_with_commits(root, batches):
    commits = root / "commits"
    commits.mkdir(parents=True)
    for batch in batches:
        (commits / str(batch)).write_text("v1\n{}")
        (commits / f".{batch}.crc").write_bytes(b"crc")
    return commits


def test_uncommit_removes_the_last_batch_and_its_checksum_only(tmp_path):
    commits = checkpoint_with_commits(tmp_path, [0, 1, 2, 10])

    assert commit_faults.uncommit_last_batch(str(tmp_path)) == 10

    assert sorted(path.name for path in commits.iterdir()) == [".0.crc", ".1.crc", ".2.crc", "0", "1", "2"]


def test_uncommit_of_a_checkpoint_without_commits_is_nothing(tmp_path):
    assert commit_faults.uncommit_last_batch(str(tmp_path)) is None
    checkpoint_with_commits(tmp_path, [])
    assert commit_faults.uncommit_last_batch(f"file:{tmp_path}") is None


def test_after_a_sink_commit_the_armed_table_loses_its_last_commit_and_fails(tmp_path):
    commits = checkpoint_with_commits(tmp_path, [0, 1])
    commit_faults.after_sink_commit("shop.totals", str(tmp_path))  # unarmed: nothing taken back
    assert (commits / "1").exists()

    with commit_faults.failing_after_commit("shop.totals") as armed:
        commit_faults.after_sink_commit("shop.other", str(tmp_path))
        assert (commits / "1").exists()
        with pytest.raises(InjectedCommitFault):
            commit_faults.after_sink_commit("shop.totals", f"file://{tmp_path}")
        assert armed.fired and not (commits / "1").exists() and (commits / "0").exists()
