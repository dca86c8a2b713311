"""Where the lakehouse keeps its parts, from the environment (adapter/dbt_spark_streaming/lakehouse.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt_spark_streaming.lakehouse import Lakehouse, use_root


def test_everything_under_the_current_folders_lakehouse_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lakehouse = Lakehouse.from_env({})
    root = str(tmp_path / ".lakehouse")
    assert lakehouse == Lakehouse(
        root=root, warehouse=f"{root}/warehouse", metastore=f"{root}/metastore",
        checkpoints=f"{root}/checkpoints", landing=f"{root}/landing",
    )


def test_an_empty_variable_counts_as_unset():
    assert Lakehouse.from_env({"LAKEHOUSE_DIR": "", "LAKEHOUSE_LANDING_DIR": ""}) == Lakehouse.from_env({})


def test_a_relative_or_home_root_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert Lakehouse.from_env({"LAKEHOUSE_DIR": "data/lh"}).root == str(tmp_path / "data" / "lh")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert Lakehouse.from_env({"LAKEHOUSE_DIR": "~/lh"}).landing == f"{tmp_path}/lh/landing"


@pytest.mark.parametrize("variable, part", [
    ("LAKEHOUSE_WAREHOUSE_DIR", "warehouse"),
    ("LAKEHOUSE_METASTORE_DIR", "metastore"),
    ("LAKEHOUSE_CHECKPOINT_DIR", "checkpoints"),
    ("LAKEHOUSE_LANDING_DIR", "landing"),
])
def test_each_part_moves_on_its_own(tmp_path, variable, part):
    lakehouse = Lakehouse.from_env({"LAKEHOUSE_DIR": str(tmp_path / "lh"), variable: str(tmp_path / "elsewhere")})
    assert getattr(lakehouse, part) == str(tmp_path / "elsewhere")
    others = {"warehouse", "metastore", "checkpoints", "landing"} - {part}
    assert all(getattr(lakehouse, other) == f"{tmp_path}/lh/{other}" for other in others)


def test_uris_are_kept_as_they_are():
    lakehouse = Lakehouse.from_env({"LAKEHOUSE_DIR": "s3a://bucket/lh", "LAKEHOUSE_LANDING_DIR": "file:/mnt/landing/"})
    assert (lakehouse.root, lakehouse.warehouse) == ("s3a://bucket/lh", "s3a://bucket/lh/warehouse")
    assert lakehouse.landing == "file:/mnt/landing/"
    assert lakehouse.landing_path("recordings") == "file:/mnt/landing/recordings"


def test_source_paths_resolve_under_landing_unless_absolute_or_a_uri(tmp_path):
    lakehouse = Lakehouse.from_env({"LAKEHOUSE_DIR": str(tmp_path)})
    assert lakehouse.landing_path("recordings/2026") == f"{tmp_path}/landing/recordings/2026"
    assert lakehouse.landing_path("/data/recordings") == "/data/recordings"
    assert lakehouse.landing_path("abfss://c@a.dfs.core.windows.net/r") == "abfss://c@a.dfs.core.windows.net/r"


def test_checkpoint_locations_resolve_under_the_checkpoint_folder(tmp_path):
    lakehouse = Lakehouse.from_env({"LAKEHOUSE_DIR": str(tmp_path), "LAKEHOUSE_CHECKPOINT_DIR": "s3a://b/cp"})
    assert lakehouse.checkpoint_path("gold/device_counts") == "s3a://b/cp/gold/device_counts"
    assert lakehouse.checkpoint_path(str(Path("/cp/x"))) == "/cp/x"


def test_a_profiles_lakehouse_dir_is_under_the_project_unless_absolute_or_a_uri(tmp_path):
    project = tmp_path / "project"
    for folder, root in ((".lakehouse", str(project / ".lakehouse")), ("/data/lh", "/data/lh"),
                         ("s3a://bucket/lh", "s3a://bucket/lh")):
        environ = {"LAKEHOUSE_DIR": "/elsewhere"}  # the profile's setting wins
        use_root(folder, project, environ)
        assert environ["LAKEHOUSE_DIR"] == root


def test_without_a_profile_setting_lakehouse_dir_or_the_projects_folder(tmp_path):
    environ = {"LAKEHOUSE_DIR": "/elsewhere"}
    use_root(None, tmp_path, environ)
    assert environ["LAKEHOUSE_DIR"] == "/elsewhere"
    environ = {}
    use_root(None, tmp_path, environ)
    assert environ["LAKEHOUSE_DIR"] == str(tmp_path / ".lakehouse")


def test_a_remote_root_keeps_this_machines_files_and_derby_in_a_local_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lakehouse = Lakehouse.from_env({"LAKEHOUSE_DIR": "s3a://lake/prod"})
    assert lakehouse.remote and lakehouse.warehouse == "s3a://lake/prod/warehouse"
    assert lakehouse.local == str(tmp_path / ".lakehouse")
    assert lakehouse.metastore == f"{tmp_path}/.lakehouse/metastore"  # Derby opens local files only
    moved = Lakehouse.from_env({"LAKEHOUSE_DIR": "s3a://lake/prod", "LAKEHOUSE_LOCAL_DIR": str(tmp_path / "mine")})
    assert moved.local == str(tmp_path / "mine") and moved.metastore == f"{tmp_path}/mine/metastore"


def test_a_local_root_holds_this_machines_files_itself(tmp_path):
    lakehouse = Lakehouse.from_env({"LAKEHOUSE_DIR": str(tmp_path), "LAKEHOUSE_LOCAL_DIR": "/elsewhere"})
    assert not lakehouse.remote and lakehouse.local == str(tmp_path)


def test_a_profile_with_a_remote_lakehouse_keeps_local_files_in_the_project(tmp_path):
    environ: dict[str, str] = {}
    use_root("s3a://lake/dev", tmp_path, environ)
    assert environ["LAKEHOUSE_DIR"] == "s3a://lake/dev"
    assert Lakehouse.from_env(environ).local == str(tmp_path / ".lakehouse")
