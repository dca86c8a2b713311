"""What the session starts with on a local lakehouse and master (session.py): streaming
checkpoints written through Hadoop's FileSystem, a driver on loopback only, file listings not
kept, and a JVM that gives back memory when idle. Read back from Spark and the JVM themselves,
not from the settings."""

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


def test_file_listings_are_not_cached_for_good(spark):
    # Each streaming view's start lists its landing folder; cached, each listing stayed in the
    # driver's memory (a warm driver's grew at every attached run).
    jvm = spark.sparkContext._jvm
    cache = jvm.org.apache.spark.sql.execution.datasources.FileStatusCache.getOrCreate(spark._jsparkSession)
    assert cache.getClass().getName().endswith(".NoopCache$")


def test_an_idle_jvm_collects_and_gives_memory_back(spark):
    jvm = spark.sparkContext._jvm
    bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(
        jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean"))
    assert int(bean.getVMOption("G1PeriodicGCInterval").getValue()) > 0
    assert bean.getVMOption("G1PeriodicGCInvokesConcurrent").getValue() == "false"  # a full one
    assert int(bean.getVMOption("MaxHeapFreeRatio").getValue()) < 100
