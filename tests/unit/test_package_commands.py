"""The installed command's serve, status, stop and report: their arguments, and the project,
profile target and lakehouse they find as dbt would, without dbt or Spark."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from dbt_spark_streaming import command_line
from dbt_spark_streaming.commands import project, report, service
from dbt_spark_streaming.commands.project import DbtOptions, ProfileError

PROFILES = """
streams:
  target: "{{ env_var('STREAMS_TARGET', 'dev') }}"
  outputs:
    dev:
      type: spark_streaming
      method: session
      schema: "dev_{{ env_var('USER_NAME', 'you') }}"
      lakehouse_dir: .lakehouse-dev
    prod:
      type: spark_streaming
      method: session
      schema: analytics
    shared:
      type: spark_streaming
      method: session
      schema: "{{ var('schema', 'shared') }}"
      lakehouse_dir: /srv/lakehouse
"""


def dbt_project(folder: Path, profiles: str = PROFILES, profiles_in: Path | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dbt_project.yml").write_text("name: streams\nconfig-version: 2\nprofile: streams\n")
    (profiles_in or folder).mkdir(parents=True, exist_ok=True)
    ((profiles_in or folder) / "profiles.yml").write_text(textwrap.dedent(profiles))
    return folder


def lakehouse_root(options: DbtOptions, environ: dict, cwd: Path, home: Path) -> str:
    return project.lakehouse(options, environ, cwd, home).root


def test_the_lakehouse_is_the_targets_lakehouse_dir_under_the_project(tmp_path):
    folder = dbt_project(tmp_path / "p")
    home = tmp_path / "home"

    assert lakehouse_root(DbtOptions(), {}, folder, home) == str(folder / ".lakehouse-dev")
    # from a folder inside the project, as dbt finds it
    (folder / "models").mkdir()
    assert lakehouse_root(DbtOptions(profiles_dir=str(folder)), {}, folder / "models", home) == str(
        folder / ".lakehouse-dev")
    # an absolute lakehouse_dir as it is; a target without one: LAKEHOUSE_DIR, else <project>/.lakehouse
    assert lakehouse_root(DbtOptions(target="shared"), {}, folder, home) == "/srv/lakehouse"
    assert lakehouse_root(DbtOptions(target="prod"), {}, folder, home) == str(folder / ".lakehouse")
    assert lakehouse_root(DbtOptions(target="prod"), {"LAKEHOUSE_DIR": str(tmp_path / "elsewhere")},
                          folder, home) == str(tmp_path / "elsewhere")


def test_profiles_come_from_the_option_then_dbt_profiles_dir_then_this_folder_then_home_dbt(tmp_path):
    folder = dbt_project(tmp_path / "p", profiles_in=tmp_path / "home" / ".dbt")
    home = tmp_path / "home"
    elsewhere = dbt_project(tmp_path / "other", PROFILES.replace(".lakehouse-dev", "/other-lakehouse"))
    options = DbtOptions(project_dir=str(folder))

    assert lakehouse_root(options, {}, folder, home) == str(folder / ".lakehouse-dev")  # ~/.dbt
    assert lakehouse_root(options, {"DBT_PROFILES_DIR": str(elsewhere)}, folder, home) == "/other-lakehouse"
    assert lakehouse_root(options, {}, elsewhere, home) == "/other-lakehouse"  # profiles.yml here
    assert lakehouse_root(DbtOptions(project_dir=str(folder), profiles_dir=str(home / ".dbt")),
                          {"DBT_PROFILES_DIR": str(elsewhere)}, elsewhere, home) == str(folder / ".lakehouse-dev")
    assert project.project_dir(DbtOptions(), {"DBT_PROJECT_DIR": str(elsewhere)}, folder) == elsewhere


def test_the_target_comes_from_the_option_then_dbt_target_then_the_profile_rendered(tmp_path):
    folder = dbt_project(tmp_path / "p")

    def target(options=None, **environ):
        found = project.profile_target(options or DbtOptions(), environ, folder, tmp_path)
        return found.name, found.schema

    assert target() == ("dev", "dev_you")
    assert target(USER_NAME="ann") == ("dev", "dev_ann")
    assert target(STREAMS_TARGET="prod") == ("prod", "analytics")
    assert target(DBT_TARGET="shared", STREAMS_TARGET="prod") == ("shared", "shared")
    assert target(DbtOptions(target="shared", vars="{schema: team}"), DBT_TARGET="prod") == ("shared", "team")
    assert project.lakehouse(DbtOptions(target="prod"), {}, folder, tmp_path).target == "analytics"


@pytest.mark.parametrize(("change", "said"), [
    (lambda folder: (folder / "dbt_project.yml").unlink(), "has no dbt_project.yml"),
    (lambda folder: (folder / "profiles.yml").unlink(), "No profiles.yml in"),
    (lambda folder: (folder / "profiles.yml").write_text("other: {outputs: {}}\n"), "has no profile 'streams'"),
])
def test_a_project_or_profile_that_cannot_be_found_says_what_to_give(tmp_path, change, said):
    folder = dbt_project(tmp_path / "p")
    change(folder)
    with pytest.raises(ProfileError, match=said):
        project.profile_target(DbtOptions(), {}, folder, tmp_path / "home")


def test_an_unknown_target_names_the_targets_there_are(tmp_path):
    folder = dbt_project(tmp_path / "p")
    with pytest.raises(ProfileError, match="has no target 'staging'; its targets: dev, prod, shared"):
        project.profile_target(DbtOptions(target="staging"), {}, folder, tmp_path)


def test_serve_takes_dbts_options_and_adds_the_trigger_to_the_users_vars():
    args = service.serve_parser().parse_args(["--select", "bronze+", "gold", "--target", "prod",
                                              "--vars", "{region: eu}", "--project-dir", "/p"])
    options = DbtOptions.from_args(args)
    assert args.trigger == "on_new_data" and options == DbtOptions("/p", None, "prod", "{region: eu}")

    run = service.run_args(options, args.trigger, args.select)
    assert run[:2] == ["run", "--vars"] and run[3:] == ["--select", "bronze+", "gold"]
    assert json.loads(run[2]) == {"region": "eu", "stream_trigger": "on_new_data"}
    assert json.loads(service.run_args(DbtOptions(), "500 milliseconds", None)[2]) == {
        "stream_trigger": "500 milliseconds"}
    with pytest.raises(ProfileError, match="is not a mapping"):
        service.run_args(DbtOptions(vars="[1, 2]"), "on_new_data", None)
    assert options.as_dbt_args() == ["--project-dir", "/p", "--target", "prod"]


def test_status_and_stop_of_a_lakehouse_where_nothing_served(tmp_path, capsys):
    folder = dbt_project(tmp_path / "p")
    options = ["--project-dir", str(folder), "--profiles-dir", str(folder)]

    assert command_line.main(["status", *options]) == 1
    assert f"has not run in the lakehouse {folder / '.lakehouse-dev'}" in capsys.readouterr().out
    assert command_line.main(["stop", *options, "--target", "prod"]) == 0
    assert "not running" in capsys.readouterr().out
    assert command_line.main(["status", "--project-dir", str(tmp_path / "none")]) == 2
    assert "has no dbt_project.yml" in capsys.readouterr().err


def test_the_warm_driver_starts_with_what_the_targets_sessions_start_with(tmp_path):
    folder = dbt_project(tmp_path / "p", PROFILES.replace("      lakehouse_dir: /srv/lakehouse\n", (
        "      lakehouse_dir: /srv/lakehouse\n"
        "      master: \"{{ env_var('SPARK_URL', 'local[2]') }}\"\n"
        "      metastore_url: jdbc:postgresql://127.0.0.1/hive\n"
        "      server_side_parameters:\n"
        "        spark.sql.shuffle.partitions: \"{{ var('partitions', 8) }}\"\n")))
    home = tmp_path / "home"

    shared = project.profile_target(DbtOptions(target="shared", vars="{partitions: 2}"), {}, folder, home)
    assert (shared.master, shared.metastore_url) == ("local[2]", "jdbc:postgresql://127.0.0.1/hive")
    assert shared.server_side_parameters == {"spark.sql.shuffle.partitions": "2"}
    dev = project.profile_target(DbtOptions(), {}, folder, home)
    assert (dev.master, dev.metastore_url, dev.server_side_parameters) == (None, None, {})


def test_driver_status_and_stop_where_none_runs(tmp_path, capsys):
    folder = dbt_project(tmp_path / "p")
    options = ["--project-dir", str(folder), "--profiles-dir", str(folder)]

    assert command_line.main(["driver", "status", *options]) == 1
    assert f"No warm driver runs for {folder / '.lakehouse-dev'}" in capsys.readouterr().out
    assert command_line.main(["driver", "stop", *options]) == 0
    assert command_line.main(["driver", "start", *options, "--idle-minutes", "0"]) == 2
    assert "give a number of minutes above 0" in capsys.readouterr().err
    remote = dbt_project(tmp_path / "r", PROFILES.replace("/srv/lakehouse", "s3a://bucket/lakehouse"))
    assert command_line.main(["driver", "status", "--project-dir", str(remote), "--profiles-dir", str(remote),
                              "--target", "shared"]) == 1
    assert "No warm driver runs for s3a://bucket/lakehouse" in capsys.readouterr().out


def test_the_report_reads_the_targets_progress_table_and_needs_matplotlib(monkeypatch):
    target = project.ProfileTarget("streams", "prod", None, "analytics")
    assert report.progress_table_name(target, {}) == "analytics._stream_progress"
    assert report.progress_table_name(target, {"STREAM_PROGRESS_TABLE": "ops.progress"}) == "ops.progress"
    assert report.parser().parse_args(["--since-hours", "6"]).since_hours == 6

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    with pytest.raises(SystemExit) as stopped:
        command_line.main(["report"])
    assert "pip install 'dbt-spark-streaming[report]'" in str(stopped.value)


def test_help_lists_every_command_with_one_line(capsys):
    with pytest.raises(SystemExit):
        command_line.main(["--help"])
    said = capsys.readouterr().out
    for command in ("init", "lint", "jars", "serve", "status", "stop", "report", "reset-checkpoint", "rollback",
                    "driver"):
        assert f"    {command} " in said



def test_an_env_var_or_var_the_profile_needs_and_nobody_gives_is_named(tmp_path):
    folder = dbt_project(tmp_path / "p", PROFILES.replace("'USER_NAME', 'you'", "'USER_NAME'")
                         .replace("var('schema', 'shared')", "var('schema')"))
    home = tmp_path / "home"

    with pytest.raises(ProfileError, match=r"env_var\('USER_NAME'\), which is not set and has no default: set USER_NAME"):
        project.lakehouse(DbtOptions(), {}, folder, home)
    assert lakehouse_root(DbtOptions(), {"USER_NAME": "ann"}, folder, home) == str(folder / ".lakehouse-dev")
    with pytest.raises(ProfileError, match=r"var\('schema'\), which --vars does not give"):
        project.lakehouse(DbtOptions(target="shared"), {}, folder, home)
