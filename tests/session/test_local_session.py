"""What the session starts with on a local lakehouse and master (session.py): streaming
checkpoints written through Hadoop's FileSystem, and a driver on loopback only. Read back from
Spark itself, not from the settings."""

from __future__ import annotations


def test_spark_writes_local_checkpoints_through_the_file_system(spark, lakehouse):
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(lakehouse.checkpoint_path("any_model"))
    manager = jvm.org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager.create(
        path, spark._jsparkSession.sessionState().newHadoopConf())
    assert manager.getClass().getName().endswith(".FileSystemBasedCheckpointFileManager")


def test_a_local_driver_listens_on_loopback_only(spark):
    env = spark.sparkContext._jsc.sc().env()
    assert env.rpcEnv().address().host() == "127.0.0.1"
    assert env.blockManager().blockManagerId().host() == "127.0.0.1"
