"""The driver JVM's start options: the class-data archive's key and when it is used
(adapter/dbt_spark_streaming/jvm_options.py). No JVM: the archive itself is made by `jars`."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt_spark_streaming import classpath, jvm_options
from dbt_spark_streaming.java_runtime import Jdk
from dbt_spark_streaming.jvm_options import archive_key, class_data_options, java_options, sharing_on

JARS = [("/j/delta.jar", 10, 1), ("/j/kafka.jar", 20, 2)]


def test_the_key_is_the_same_for_the_same_java_and_class_path():
    assert archive_key("java 17", JARS) == archive_key("java 17", list(JARS))


@pytest.mark.parametrize("other", [
    [("/j/delta.jar", 10, 1)],                          # a jar less
    [("/j/delta.jar", 11, 1), ("/j/kafka.jar", 20, 2)],  # a jar of another size
    [("/j/delta.jar", 10, 9), ("/j/kafka.jar", 20, 2)],  # a jar replaced (its time)
    list(reversed(JARS)),                               # the class path in another order
])
def test_another_class_path_is_another_key(other):
    assert archive_key("java 17", other) != archive_key("java 17", JARS)


def test_another_java_is_another_key():
    assert archive_key("java 17.0.15", JARS) != archive_key("java 17.0.16", JARS)


@pytest.mark.parametrize("value", ["off", "OFF", " off ", "0", "false", "no"])
def test_sharing_turned_off(value):
    assert not sharing_on({"SPARK_CLASS_DATA_SHARING": value})


@pytest.mark.parametrize("environ", [{}, {"SPARK_CLASS_DATA_SHARING": "on"}, {"SPARK_CLASS_DATA_SHARING": ""}])
def test_sharing_on_by_default(environ):
    assert sharing_on(environ)


def test_no_options_when_off(tmp_path, monkeypatch):
    monkeypatch.setattr(jvm_options, "ARCHIVE_DIR", tmp_path)
    archive = jvm_options.archive_path(["/j/delta.jar"], None, {"SPARK_CLASS_DATA_SHARING": "off"})
    archive.write_bytes(b"")
    assert java_options(["/j/delta.jar"], None, {"SPARK_CLASS_DATA_SHARING": "off"}) == []


def test_no_options_without_an_archive(tmp_path, monkeypatch):
    monkeypatch.setattr(jvm_options, "ARCHIVE_DIR", tmp_path)
    assert java_options(["/j/delta.jar"], None, {}) == []


def test_the_archive_made_for_this_class_path_is_used(tmp_path, monkeypatch):
    monkeypatch.setattr(jvm_options, "ARCHIVE_DIR", tmp_path)
    archive = jvm_options.archive_path(["/j/delta.jar"], None, {})
    archive.write_bytes(b"")
    options = java_options(["/j/delta.jar"], None, {})
    assert f"-XX:SharedArchiveFile={archive}" in options
    assert "-Xshare:auto" in options  # a stale or broken archive is ignored, never fatal
    # A JDBC driver on the JVM's class path (a shared metastore) is another class path.
    assert java_options(["/j/delta.jar"], "/j/postgresql.jar", {}) == []


def test_the_options_name_the_archive():
    options = class_data_options(Path("/a/k.jsa"), exists=True)
    assert options[:2] == ["-XX:SharedArchiveFile=/a/k.jsa", "-Xshare:auto"]
    assert class_data_options(Path("/a/k.jsa"), exists=False) == []


def test_making_the_archive_never_fails_the_set_up(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(jvm_options, "ARCHIVE_DIR", tmp_path)
    monkeypatch.setattr(jvm_options, "BUILD_LOG", tmp_path / "build.log")
    monkeypatch.setattr(jvm_options, "class_paths", lambda master: ([], ["/j/delta.jar"]))

    def fails(archive, scratch, environ):
        raise RuntimeError("the archive's run exited with 1")

    monkeypatch.setattr(jvm_options, "_run_workload", fails)
    assert jvm_options.build_class_data_archive({}) is None
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and said[0].startswith("Class-data archive not made")
    assert not list(tmp_path.glob("*.jsa"))


def test_nothing_is_made_when_off(monkeypatch):
    monkeypatch.setattr(jvm_options, "_run_workload", lambda *args: pytest.fail("made one"))
    assert jvm_options.build_class_data_archive({"SPARK_CLASS_DATA_SHARING": "off"}) is None


def test_an_existing_archive_is_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(jvm_options, "ARCHIVE_DIR", tmp_path)
    monkeypatch.setattr(jvm_options, "class_paths", lambda master: ([], ["/j/delta.jar"]))
    monkeypatch.setattr(jvm_options, "_run_workload", lambda *args: pytest.fail("made again"))
    monkeypatch.setattr(jvm_options, "choose_java", lambda environ: Jdk(tmp_path / "jdk-21", (21, 0, 8)))
    # local mode: the jars on the driver's class path; the Java sessions will start on
    archive = jvm_options.archive_path([], "/j/delta.jar", {"JAVA_HOME": str(tmp_path / "jdk-21")})
    archive.write_bytes(b"")
    assert jvm_options.build_class_data_archive({}) == archive


def test_a_new_archive_replaces_the_old_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(jvm_options, "ARCHIVE_DIR", tmp_path)
    monkeypatch.setattr(jvm_options, "BUILD_LOG", tmp_path / "build.log")
    monkeypatch.setattr(jvm_options, "class_paths", lambda master: ([], ["/j/delta.jar"]))
    (tmp_path / "old.jsa").write_bytes(b"")
    monkeypatch.setattr(jvm_options, "_run_workload",
                        lambda archive, scratch, environ: archive.write_bytes(b"archive"))
    archive = jvm_options.build_class_data_archive({})
    assert archive is not None and archive.read_bytes() == b"archive"
    assert sorted(p.name for p in tmp_path.iterdir()) == [archive.name]


def test_local_sessions_load_the_jars_from_the_drivers_class_path(monkeypatch):
    monkeypatch.setattr(classpath, "jar_paths", lambda: ["/j/delta.jar", "/j/postgresql.jar"])
    # local mode: archivable classes, no copy fetched by the in-process executor
    assert classpath.class_paths("local[*]") == ([], ["/j/delta.jar", "/j/postgresql.jar"])
    assert classpath.class_paths("local[2]", ["/j/postgresql.jar"]) == ([], ["/j/postgresql.jar", "/j/delta.jar"])
    # a cluster's executors need them shipped; the metastore's JDBC driver stays the driver's
    assert classpath.class_paths("spark://127.0.0.1:7077", ["/j/postgresql.jar"]) == (
        ["/j/delta.jar", "/j/postgresql.jar"], ["/j/postgresql.jar"])
