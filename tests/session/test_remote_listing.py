"""Listing a folder through Hadoop's FileSystem, as for an object store, lists what the local
listing does, in a number of Py4J calls that does not grow with the folder.

The folder is local files seen through Hadoop's view file system (`viewfs://`), so the listing
takes the path an `s3a://` location takes, in this process.
"""

from __future__ import annotations

import itertools
import threading

import pytest
from py4j.protocol import MEMORY_COMMAND_NAME

from dbt_spark_streaming.jvm import hadoop_fs

# Hadoop caches a file system by its scheme and authority: each test mounts its own.
MOUNTS = itertools.count()
NAMES = ["a.json", "b c.json", "d#1.json", "e%20?.json", ".hidden.json", "_SUCCESS", "f.json._COPYING_",
         "sub dir/g.json", "sub dir/deeper/h.json", "_d=1/i.json", "_temporary/j.json", ".k/l.json"]


@pytest.fixture
def folders(spark, tmp_path):
    """(the folder on local disk, the same folder as a viewfs:// location)."""
    mount = f"listing{next(MOUNTS)}"
    spark.sparkContext._jsc.hadoopConfiguration().set(f"fs.viewfs.mounttable.{mount}.link./data",
                                                       f"file://{tmp_path}")
    local = tmp_path / "landing"
    for name in NAMES:
        (local / name).parent.mkdir(parents=True, exist_ok=True)
        (local / name).write_text("{}\n")
    return local, f"viewfs://{mount}/data/landing"


def relative(locations: list[str], root: str) -> list[str]:
    return sorted(hadoop_fs.path_of_listed(location)[len(hadoop_fs.path_of_listed(root)):] for location in locations)


def test_a_remote_listing_finds_what_the_local_one_finds(spark, folders):
    local, remote = folders

    assert not remote.startswith("file:") and hadoop_fs.local_path(remote) is None
    found = hadoop_fs.files_under(spark, remote)
    assert relative(found, remote) == relative(hadoop_fs.files_under(spark, str(local)), f"file:{local}")
    assert relative(found, remote) == ["/_d=1/i.json", "/a.json", "/b c.json", "/d#1.json", "/e%20?.json",
                                       "/sub dir/deeper/h.json", "/sub dir/g.json"]
    assert all(location.startswith(f"{remote}/") for location in found)

    names = hadoop_fs.list_names(spark, remote)
    assert sorted(names) == sorted(path.name for path in local.iterdir())
    assert sorted(hadoop_fs.list_names(spark, f"{remote}/sub dir")) == ["deeper", "g.json"]


def test_a_missing_or_empty_remote_folder_lists_nothing(spark, folders):
    local, remote = folders
    (local / "empty").mkdir()

    assert hadoop_fs.files_under(spark, f"{remote}/missing") == []
    assert hadoop_fs.list_names(spark, f"{remote}/missing") == []
    assert hadoop_fs.files_under(spark, f"{remote}/empty") == []
    assert hadoop_fs.list_names(spark, f"{remote}/empty") == []


def test_a_remote_listing_makes_as_many_py4j_calls_for_ten_times_the_files(spark, folders, monkeypatch):
    local, remote = folders
    client = spark.sparkContext._gateway._gateway_client
    send, calls, this_thread = client.send_command, [], threading.get_ident()

    def counted(command, *args, **kwargs):
        # Not Py4J's deletes of Python's garbage, which go whenever Python collects it.
        if threading.get_ident() == this_thread and not command.startswith(MEMORY_COMMAND_NAME):
            calls.append(command)
        return send(command, *args, **kwargs)

    monkeypatch.setattr(client, "send_command", counted)

    def calls_to_list(files: int) -> int:
        for number in range(files):
            (local / "many" / f"{number:04d}.json").parent.mkdir(exist_ok=True)
            (local / "many" / f"{number:04d}.json").write_text("{}\n")
        calls.clear()
        assert len(hadoop_fs.files_under(spark, f"{remote}/many")) == files
        assert len(hadoop_fs.list_names(spark, f"{remote}/many")) == files
        return len(calls)

    calls_to_list(1)  # the classes looked up once a process
    assert calls_to_list(5) == calls_to_list(50)



def test_a_local_folder_lists_its_data_files_as_hadoop_spells_them(spark, folders):
    """A file's location is what a COPY INTO's load log records: a local listing spelling it
    otherwise than Hadoop did would load the file again."""
    local, _remote = folders
    for name in ("é ü.json", "x:y.json"):
        (local / name).write_text("{}\n")

    listed = hadoop_fs.list_data_files(spark, str(local))
    through_hadoop = hadoop_fs._data_files_through_hadoop(spark, f"file://{local}/")

    assert sorted(listed) == sorted(through_hadoop)
    assert sorted(file.path.rsplit("/", 1)[-1] for file in listed) == sorted(
        ["a.json", "b c.json", "d#1.json", "e%20?.json", "é ü.json", "x:y.json"])
    assert all(file.modification_time_ms > 0 and file.size == 3 for file in listed)
