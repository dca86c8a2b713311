"""Files through Hadoop's FileSystem, so that local paths and object-store URIs work alike."""

from __future__ import annotations

from pyspark.sql import SparkSession


def _path_and_fs(spark: SparkSession, location: str):
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(location)
    return path, path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())


def exists(spark: SparkSession, location: str) -> bool:
    path, fs = _path_and_fs(spark, location)
    return bool(fs.exists(path))


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
