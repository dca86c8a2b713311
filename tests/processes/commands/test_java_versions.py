"""The Java a session starts on (java_runtime.py): the suite runs on the newest supported JDK the
machine has (Java 25 on this machine kind); the demo's `dbt build` runs here on Java 17 too, as a
user's JAVA_HOME chooses it."""

from __future__ import annotations

import pytest

from dbt_spark_streaming.java_runtime import candidates, choose_java
from python_runners.demo.data import land_batch, recordings_folder
from python_runners.testing.dbt_process import run_dbt_process
from python_runners.testing.separate_lakehouse import separate_lakehouse_env
from dbt_spark_streaming.lakehouse import Lakehouse

TIMEOUT = 900  # a bound for a stuck run on a JVM without its class-data archive, not a speed target
JAVA_VERSION = "select java_method('java.lang.System', 'getProperty', 'java.version') as java_version"


def java_of(env, target) -> str:
    shown = run_dbt_process(["show", "--inline", JAVA_VERSION], env, target, timeout=TIMEOUT)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    return shown.stdout


def test_the_demo_builds_on_java_17_chosen_by_java_home(tmp_path):
    java_17 = next((jdk for jdk in candidates() if jdk.major == 17), None)
    if java_17 is None:
        pytest.skip("no JDK 17 on this machine")
    env = separate_lakehouse_env(tmp_path / "lakehouse", JAVA_HOME=str(java_17.home))
    land_batch(recordings_folder(Lakehouse.from_env(env)), records=60, files=2)

    built = run_dbt_process(["build"], env, tmp_path / "target", timeout=TIMEOUT)

    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert f"| {java_17.version_text}" in java_of(env, tmp_path / "target")


def test_without_java_home_the_newest_supported_jdk_runs_the_session(tmp_path):
    env = {name: value for name, value in separate_lakehouse_env(tmp_path / "lakehouse").items()
           if name != "JAVA_HOME"}
    newest = choose_java(env)
    assert f"| {newest.version_text}" in java_of(env, tmp_path / "target")
    assert newest.version >= max((jdk.version for jdk in candidates() if jdk.major in (17, 21)), default=(0,))
