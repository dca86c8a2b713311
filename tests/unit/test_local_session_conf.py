"""What a session on a local lakehouse or master starts with (session.py): checkpoints renamed
through Hadoop's FileSystem, a driver on loopback; Spark's own choices elsewhere."""

from __future__ import annotations

import pytest

from dbt_spark_streaming.session import checkpoint_file_manager, loopback_driver

KEY = "spark.sql.streaming.checkpointFileManagerClass"


@pytest.mark.parametrize("checkpoints", ["/home/me/project/.lakehouse/checkpoints", "file:///srv/lakehouse/checkpoints",
                                         "file:/srv/lakehouse/checkpoints"])
def test_a_local_checkpoint_root_renames_through_the_file_system(checkpoints):
    assert checkpoint_file_manager(checkpoints)[KEY].endswith(".FileSystemBasedCheckpointFileManager")


@pytest.mark.parametrize("checkpoints", ["s3a://bucket/lakehouse/checkpoints", "hdfs://namenode:8020/lakehouse/checkpoints",
                                         "abfss://container@account.dfs.core.windows.net/checkpoints"])
def test_other_storage_keeps_sparks_choice(checkpoints):
    assert checkpoint_file_manager(checkpoints) == {}


def test_a_local_master_binds_the_driver_to_loopback():
    assert loopback_driver("local[2]") == {"spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1"}


def test_a_cluster_master_keeps_sparks_address():
    assert loopback_driver("spark://127.0.0.1:7077") == {}
