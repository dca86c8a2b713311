"""Files through Hadoop's FileSystem, so that local paths and object-store URIs work alike."""

from __future__ import annotations

from typing import NamedTuple

from pyspark.sql import SparkSession


class DataFile(NamedTuple):
    path: str
    modification_time_ms: int
    size: int


def _path_and_fs(spark: SparkSession, location: str):
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(location)
    return path, path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())


def uri_path(spark: SparkSession, location: str) -> str:
    """The path part of a location as Hadoop reads it (`/landing/x` of `s3a://bucket/landing/x`)."""
    return spark._jvm.org.apache.hadoop.fs.Path(location).toUri().getPath()


def exists(spark: SparkSession, location: str) -> bool:
    path, fs = _path_and_fs(spark, location)
    return bool(fs.exists(path))


def mkdirs(spark: SparkSession, location: str) -> None:
    path, fs = _path_and_fs(spark, location)
    fs.mkdirs(path)


def list_names(spark: SparkSession, location: str) -> list[str]:
    """Names directly under a folder; empty when it does not exist."""
    path, fs = _path_and_fs(spark, location)
    if not fs.exists(path):
        return []
    return [status.getPath().getName() for status in fs.listStatus(path)]


def delete(spark: SparkSession, location: str) -> None:
    path, fs = _path_and_fs(spark, location)
    if fs.exists(path):
        fs.delete(path, True)


def read_text(spark: SparkSession, location: str) -> str:
    path, fs = _path_and_fs(spark, location)
    stream = fs.open(path)
    try:
        return spark.sparkContext._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
    finally:
        stream.close()


def write_text(spark: SparkSession, location: str, text: str) -> None:
    path, fs = _path_and_fs(spark, location)
    stream = fs.create(path, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()


def write_atomically(spark: SparkSession, location: str, text: str) -> None:
    """As Spark writes its own log entries: a temporary file renamed into place (no half-written
    entry after a crash), refusing to replace an existing one."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(location)
    manager = jvm.org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager.create(
        path.getParent(), spark.sparkContext._jsc.hadoopConfiguration()
    )
    stream = manager.createAtomic(path, False)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    except Exception:
        stream.cancel()
        raise
    stream.close()


def list_data_files(spark: SparkSession, location: str) -> list[DataFile]:
    """The files directly under a folder that Spark's file source would read: names starting
    with '.' or '_' are skipped, as Spark skips them."""
    path, fs = _path_and_fs(spark, location)
    if not fs.exists(path):
        return []
    return [
        DataFile(status.getPath().toString(), int(status.getModificationTime()), int(status.getLen()))
        for status in fs.listStatus(path)
        if status.isFile() and not status.getPath().getName().startswith((".", "_"))
    ]


def rename(spark: SparkSession, source: str, target: str) -> None:
    """Move a file or folder (one rename on a local or HDFS file system); `target` must not exist."""
    source_path, fs = _path_and_fs(spark, source)
    target_path, _ = _path_and_fs(spark, target)
    if not fs.rename(source_path, target_path):
        raise OSError(f"Could not move {source} to {target}.")
