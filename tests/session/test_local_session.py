"""What the session starts with on a local lakehouse and master (session.py): streaming
checkpoints written through Hadoop's FileSystem, local files and Delta commits without Hadoop's
checksum files or its FileContext, a driver on loopback only, file listings not
kept, and a JVM that gives back memory when idle. Read back from Spark and the JVM themselves,
not from the settings."""

from __future__ import annotations

from pathlib import Path


def test_spark_writes_local_checkpoints_through_the_file_system(spark, lakehouse):
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(lakehouse.checkpoint_path("any_model"))
    manager = jvm.org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager.create(
        path, spark._jsparkSession.sessionState().newHadoopConf())
    assert manager.getClass().getName().endswith(".FileSystemBasedCheckpointFileManager")


def test_a_delta_log_and_a_checkpoint_hold_no_hadoop_checksum_files(spark, lakehouse):
    # Each file beside its hidden `.crc` doubled what every snapshot update lists.
    table = f"{lakehouse.warehouse}/no_checksums"
    checkpoint = lakehouse.checkpoint_path("no_checksums")
    spark.range(3).write.format("delta").save(table)
    query = (spark.readStream.name("input").format("delta").load(table).writeStream.format("delta")
             .option("checkpointLocation", checkpoint).trigger(availableNow=True)
             .start(f"{table}_copy"))
    query.awaitTermination()
    assert spark.read.format("delta").load(f"{table}_copy").count() == 3
    written = [path for root in (table, checkpoint, f"{table}_copy") for path in Path(root).rglob("*")]
    assert any(path.name.endswith(".json") for path in written)
    assert [path for path in written if path.name.endswith(".crc") and path.name.startswith(".")] == []


def test_delta_commits_local_files_through_the_file_system(spark, lakehouse):
    jvm = spark.sparkContext._jvm
    conf = spark._jsc.hadoopConfiguration()
    path = jvm.org.apache.hadoop.fs.Path(f"{lakehouse.warehouse}/any_table")
    path = path.getFileSystem(conf).makeQualified(path)  # as Delta's own: file:/...
    store = jvm.org.apache.spark.sql.delta.storage.DelegatingLogStore(conf)
    delegate = store.getDelegate(path)  # Delta wraps a log store of its storage package
    assert delegate.logStoreImpl().getClass().getName() == "io.delta.storage.LocalLogStore"


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
