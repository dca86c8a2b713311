"""Which Java sessions start on: JAVA_HOME, else the newest JDK Spark 4.2 supports."""

from pathlib import Path

import pytest

from dbt_spark_streaming.java_runtime import JavaVersionError, choose_java, parse_version


def _jdk(root: Path, name: str, version: str) -> Path:
    home = root / name
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("")
    (home / "release").write_text(f'IMPLEMENTOR="test"\nJAVA_VERSION="{version}"\n')
    return home


@pytest.fixture
def jdks(tmp_path):
    root = tmp_path / "jvm"
    homes = {version: _jdk(root, f"jdk-{version}", version)
             for version in ("11.0.2", "17.0.15", "21.0.8", "23.0.1", "25.0.2")}
    return root, homes


def _choose(root: Path, **environ: str):
    return choose_java({"PATH": "", **environ}, folders=[str(root)])


def test_without_java_home_the_newest_supported_jdk_is_chosen(jdks):
    root, homes = jdks
    assert _choose(root).version == (21, 0, 8)  # 23 is not supported, 25.0.2 is too old a 25
    newest = _jdk(root, "temurin-25", "25.0.3")
    assert _choose(root).home == newest.resolve()


def test_java_home_is_used_even_when_a_newer_jdk_is_installed(jdks):
    root, homes = jdks
    assert _choose(root, JAVA_HOME=str(homes["17.0.15"])).version == (17, 0, 15)


@pytest.mark.parametrize("version, reason", [
    ("25.0.2", "deprecates Java 25 before 25.0.3"),
    ("11.0.2", "not one Spark 4.2 supports"),
    ("23.0.1", "not one Spark 4.2 supports"),
])
def test_a_java_home_spark_cannot_run_on_is_refused_with_the_reason(jdks, version, reason):
    root, homes = jdks
    with pytest.raises(JavaVersionError) as refused:
        _choose(root, JAVA_HOME=str(homes[version]))
    assert reason in str(refused.value)
    assert f"JAVA_HOME is {homes[version]}" in str(refused.value)


def test_no_usable_jdk_names_what_was_seen(tmp_path):
    root = tmp_path / "jvm"
    old = _jdk(root, "old", "25.0.1")
    with pytest.raises(JavaVersionError) as refused:
        _choose(root)
    assert str(old.resolve()) in str(refused.value) and "25.0.3" in str(refused.value)


def test_a_folder_without_a_jdk_in_java_home_is_refused(tmp_path):
    with pytest.raises(JavaVersionError, match="holds no JDK"):
        _choose(tmp_path, JAVA_HOME=str(tmp_path))


@pytest.mark.parametrize("text, version", [
    ("25.0.3", (25, 0, 3)), ("25", (25, 0, 0)), ("21.0.8+9", (21, 0, 8)), ("1.8.0_402", (1, 8, 0)),
])
def test_versions_are_read_as_release_files_write_them(text, version):
    assert parse_version(text) == version
