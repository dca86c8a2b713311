"""Files through Hadoop's FileSystem, so that local paths and object-store URIs work alike."""

from __future__ import annotations

import os
import shutil
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from dbt_spark_streaming.jvm.jvm_classes import jvm_class

# What an object store's file system (S3A) counts of its requests, by kind, in Hadoop's
# IOStatistics: what a bucket's bill counts. A local file system counts none of them.
STORE_REQUESTS = {
    "requests": ("store_io_request",),
    "list": ("object_list_request", "object_continue_list_request"),
    "head": ("action_http_head_request",),
    "get": ("action_http_get_request",),
    "put": ("object_put_request",),
    "delete": ("object_delete_request", "object_bulk_delete_request"),
}


class DataFile(NamedTuple):
    path: str
    modification_time_ms: int
    size: int


def _path_and_fs(spark: SparkSession, location: str):
    path = jvm_class(spark, "org.apache.hadoop.fs.Path")(location)
    return path, path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())


def uri_path(spark: SparkSession, location: str) -> str:
    """The path part of a location as Hadoop reads it (`/landing/x` of `s3a://bucket/landing/x`)."""
    return jvm_class(spark, "org.apache.hadoop.fs.Path")(location).toUri().getPath()


def exists(spark: SparkSession, location: str) -> bool:
    local = _local(spark, location)
    if local is not None:
        return os.path.exists(local)
    path, fs = _path_and_fs(spark, location)
    return bool(fs.exists(path))


def mkdirs(spark: SparkSession, location: str) -> None:
    path, fs = _path_and_fs(spark, location)
    fs.mkdirs(path)


def list_names(spark: SparkSession, location: str) -> list[str]:
    """Names directly under a folder; empty when it does not exist. A local folder is listed
    without the JVM (a Delta log of thousands of commits is as many calls through Py4J)."""
    local = _local(spark, location)
    if local is not None:
        try:
            return os.listdir(local)
        except FileNotFoundError:
            return []
    path, fs = _path_and_fs(spark, location)
    try:  # not `exists` first: on an object store that is two requests more
        return [listed.rsplit("/", 1)[-1] for listed in _locations(spark, fs.listStatus(path))]
    except Py4JJavaError as error:
        if _not_found(error):
            return []
        raise


def is_file(spark: SparkSession, location: str) -> bool:
    """Whether a file is there: one `stat` locally, one HEAD request on an object store (S3A's
    `exists` adds a listing, for a folder of that name)."""
    local = _local(spark, location)
    if local is not None:
        return os.path.isfile(local)
    path, fs = _path_and_fs(spark, location)
    return bool(fs.isFile(path))


def store_requests(spark: SparkSession, location: str) -> dict[str, int] | None:
    """The requests this JVM has made of the store that holds `location` since its file system
    started, by kind (STORE_REQUESTS); None for one that counts none (local disk)."""
    if _local(spark, location) is not None:
        return None
    _path, fs = _path_and_fs(spark, location)
    statistics = jvm_class(spark, "org.apache.hadoop.fs.statistics.IOStatisticsSupport").retrieveIOStatistics(fs)
    if statistics is None:
        return None
    counters = statistics.counters()
    if not counters.containsKey(STORE_REQUESTS["requests"][0]):
        return None
    return {kind: sum(int(counters.get(name) or 0) for name in names) for kind, names in STORE_REQUESTS.items()}


def _not_found(error: Py4JJavaError) -> bool:
    return error.java_exception.getClass().getName() == "java.io.FileNotFoundException"


def delete(spark: SparkSession, location: str) -> None:
    path, fs = _path_and_fs(spark, location)
    if fs.exists(path):
        fs.delete(path, True)


def delete_names(spark: SparkSession, folder: str, names: list[str]) -> None:
    """Delete these files of a folder, in the order given (a local folder without the JVM)."""
    local = _local(spark, folder)
    for name in names:
        if local is not None:
            try:
                os.remove(os.path.join(local, name))
            except FileNotFoundError:
                pass
        else:
            delete(spark, f"{folder.rstrip('/')}/{name}")


def read_text(spark: SparkSession, location: str) -> str:
    local = _local(spark, location)
    if local is not None:  # one open() instead of five calls through Py4J
        with open(local, encoding="utf-8") as file:
            return file.read()
    path, fs = _path_and_fs(spark, location)
    stream = fs.open(path)
    try:
        return jvm_class(spark, "org.apache.commons.io.IOUtils").toString(stream, "UTF-8")
    finally:
        stream.close()


def write_text(spark: SparkSession, location: str, text: str) -> None:
    path, fs = _path_and_fs(spark, location)
    stream = fs.create(path, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()


def write_atomically(spark: SparkSession, location: str, text: str, replace: bool = False) -> None:
    """As Spark writes its own log entries: a temporary file renamed into place (no half-written
    entry after a crash), refusing to replace an existing one unless `replace`."""
    local = _local(spark, location)
    if local is not None:
        _write_local_atomically(local, text, replace)
        return
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(location)
    manager = jvm.org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager.create(
        path.getParent(), spark.sparkContext._jsc.hadoopConfiguration()
    )
    stream = manager.createAtomic(path, replace)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    except Exception:
        stream.cancel()
        raise
    stream.close()


def _write_local_atomically(path: str, text: str, replace: bool) -> None:
    if not replace and os.path.exists(path):
        raise FileExistsError(f"{path} exists already.")
    folder, name = os.path.split(path)
    partial = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    with open(partial, "w", encoding="utf-8") as file:
        file.write(text)
    checksum = os.path.join(folder, f".{name}.crc")  # Hadoop's, of the old content: it would fail the new
    if os.path.exists(checksum):
        os.remove(checksum)
    os.replace(partial, path)


def list_data_files(spark: SparkSession, location: str) -> list[DataFile]:
    """The files directly under a folder that Spark's file source would read: names starting
    with '.' or '_', and files still being copied, are skipped, as Spark skips them. A local
    folder is listed without the JVM: through Py4J a folder of 2,000 files took 1.4 s."""
    local = _local(spark, location)
    if local is not None:
        try:
            entries = list(os.scandir(local))
        except (FileNotFoundError, NotADirectoryError):
            return []
        files = [entry for entry in entries if entry.is_file() and not _skipped_file(entry.name)]
        return [DataFile(f"file:{os.path.abspath(entry.path)}", stat.st_mtime_ns // 1_000_000, stat.st_size)
                for entry, stat in ((entry, entry.stat()) for entry in files)]
    return _data_files_through_hadoop(spark, location)


def _data_files_through_hadoop(spark: SparkSession, location: str) -> list[DataFile]:
    path, fs = _path_and_fs(spark, location)
    try:  # not `exists` first: on an object store that is two requests more
        statuses = fs.listStatus(path)
    except Py4JJavaError as error:
        if _not_found(error):
            return []
        raise
    return [
        DataFile(status.getPath().toString(), int(status.getModificationTime()), int(status.getLen()))
        for status in statuses
        if status.isFile() and not _skipped_file(status.getPath().getName())
    ]


def rename(spark: SparkSession, source: str, target: str) -> None:
    """Move a file or folder (one rename on a local or HDFS file system); `target` must not exist."""
    source_local, target_local = _local(spark, source), _local(spark, target)
    if source_local is not None and target_local is not None:
        if os.path.exists(target_local):
            raise OSError(f"Could not move {source} to {target}: it exists.")
        os.rename(source_local, target_local)
        return
    source_path, fs = _path_and_fs(spark, source)
    target_path, _ = _path_and_fs(spark, target)
    if not fs.rename(source_path, target_path):
        raise OSError(f"Could not move {source} to {target}.")


def copy_tree(spark: SparkSession, source: str, target: str) -> None:
    """Copy a folder and everything in it to `target`, which must not exist."""
    source_local, target_local = _local(spark, source), _local(spark, target)
    if source_local is not None and target_local is not None:
        shutil.copytree(source_local, target_local)
        return
    source_path, source_fs = _path_and_fs(spark, source)
    target_path, target_fs = _path_and_fs(spark, target)
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    if not jvm_class(spark, "org.apache.hadoop.fs.FileUtil").copy(
            source_fs, source_path, target_fs, target_path, False, conf):
        raise OSError(f"Could not copy {source} to {target}.")


def files_under(spark: SparkSession, location: str) -> list[str]:
    """Every file under a folder, at any depth, that Spark's file index would list (names
    starting with '.' or '_', but for partition folders such as `_x=1`, are skipped, as are files
    still being copied); as locations with their scheme. Empty when the folder does not exist."""
    local = _local(spark, location)
    if local is not None:
        found = []
        for folder, folders, files in os.walk(local):
            folders[:] = [name for name in folders if not _hidden(name)]
            found.extend(f"file:{os.path.join(folder, name)}" for name in files if not _hidden(name))
        return found
    path, fs = _path_and_fs(spark, location)
    root = path.toUri().getPath().rstrip("/")
    try:
        iterator = fs.listFiles(path, True)
        statuses = jvm_class(spark, "org.apache.hadoop.util.functional.RemoteIterators").toArray(
            iterator, spark.sparkContext._gateway.new_array(jvm_class(spark, "java.lang.Object"), 0))
    except Py4JJavaError as error:
        if _not_found(error):
            return []
        raise
    found = []
    for listed in _locations(spark, statuses):
        below = path_of_listed(listed)[len(root):].split("/")
        if not any(_hidden(part) for part in below if part):
            found.append(listed)
    return found


def _locations(spark: SparkSession, statuses) -> list[str]:
    """The locations of a JVM array of file statuses, as `Path.toString` spells them, in a fixed
    number of Py4J calls: read back a call a file, a listing of 5,000 files took 0.9 s more than
    the store's own (bench/folder_listing)."""
    count = len(statuses)
    if not count:
        return []
    # Py4J matches an array by its exact type (an S3AFileStatus[] is no FileStatus[] to it), so
    # arrays change type in the JVM, through arraycopy, whose parameters are Objects.
    gateway, arraycopy = spark.sparkContext._gateway, jvm_class(spark, "java.lang.System").arraycopy
    as_file_statuses = gateway.new_array(jvm_class(spark, "org.apache.hadoop.fs.FileStatus"), count)
    arraycopy(statuses, 0, as_file_statuses, 0, count)
    paths = jvm_class(spark, "org.apache.hadoop.fs.FileUtil").stat2Paths(as_file_statuses)
    as_objects = gateway.new_array(jvm_class(spark, "java.lang.Object"), count)
    arraycopy(paths, 0, as_objects, 0, count)
    # NUL separates them: no listed name holds it (S3's XML listings cannot carry it, nor can a
    # POSIX name).
    return jvm_class(spark, "org.apache.hadoop.util.StringUtils").join(
        "\0", jvm_class(spark, "java.util.Arrays").asList(as_objects)).split("\0")


def path_of_listed(location: str) -> str:
    """The path of a listed location (`/lake/x/a b#1.json` of `s3a://bucket/lake/x/a b#1.json`):
    after the scheme and authority, as Path.toString leaves it unescaped."""
    scheme_end = location.find("://")
    if scheme_end < 0:
        return location.split(":", 1)[-1]
    slash = location.find("/", scheme_end + 3)
    return location[slash:] if slash >= 0 else "/"


def local_path(location: str) -> str | None:
    """The file-system path of a local location (`/x`, `file:/x`, `file:///x`), else None."""
    parts = urlsplit(location)
    if parts.scheme in ("", "file") and not parts.netloc:
        return unquote(parts.path)
    return None


def _local(spark: SparkSession | None, location: str) -> str | None:
    """local_path, where Hadoop would read the location locally too: a path without a scheme is
    on the default file system, which a cluster may set to HDFS."""
    if urlsplit(location).scheme == "" and not _default_fs_is_local(spark):
        return None
    return local_path(location)


def _default_fs_is_local(spark: SparkSession | None) -> bool:
    if spark is None:  # read without a session: local files only
        return True
    key = id(spark.sparkContext)
    if key not in _DEFAULT_FS_LOCAL:
        default = spark.sparkContext._jsc.hadoopConfiguration().get("fs.defaultFS") or "file:///"
        _DEFAULT_FS_LOCAL[key] = default.startswith("file:")
    return _DEFAULT_FS_LOCAL[key]


_DEFAULT_FS_LOCAL: dict[int, bool] = {}


def file_key(location: str) -> tuple[str, str, str]:
    """A location as (scheme, host, path), the same for every spelling of it (`file:///x/a.json`
    and `file:/x/a.json`)."""
    parts = urlsplit(location)
    scheme = parts.scheme or "file"
    return scheme, parts.netloc, unquote(parts.path).rstrip("/")


def _skipped_file(name: str) -> bool:
    """A file Spark's file source skips: a hidden name, or any starting with '_' (only folders
    such as `_x=1` are partitions)."""
    return name.startswith("_") or _hidden(name)


def _hidden(name: str) -> bool:
    return (name.startswith("_") and "=" not in name) or name.startswith(".") or name.endswith("._COPYING_")
