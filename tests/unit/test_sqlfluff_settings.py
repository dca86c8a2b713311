"""A project without sqlfluff settings (as `dbt init` makes one) is linted with the adapter's
starting settings, and `dbt-spark-streaming init` writes them, never over the project's own."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dbt_spark_streaming import command_line
from dbt_spark_streaming.lint.sqlfluff_settings import STARTING_SETTINGS
from dbt_spark_streaming.lint.streaming_lint import StreamingModel, findings, sql_linter

SORTED = "{{ config(materialized='streaming_table') }}\n\nselect id\nfrom {{ stream_changes(ref('x')) }}\norder by id\n"


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A dbt project outside this repository (whose .sqlfluff sqlfluff would otherwise find)."""
    (tmp_path / "models").mkdir()
    (tmp_path / "dbt_project.yml").write_text("name: p\nconfig-version: 2\nprofile: p\n")
    (tmp_path / "models" / "sorted.sql").write_text(SORTED)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def lint_findings(project: Path) -> list[str]:
    model = StreamingModel("sorted", project / "models" / "sorted.sql", "append")
    return [str(finding) for finding in findings(model, sql_linter(project))]


def test_without_a_dialect_the_models_are_linted_with_the_starting_settings_and_that_is_said(project, capsys):
    assert lint_findings(project) == [
        f"models/sorted.sql:5:1: {line}" for line in [
            "Model sorted uses ORDER BY, which a streaming query cannot run. A stream has no end to sort up to. Sort when you read the ta"
            "ble instead; only an aggregate with output_mode='complete', whose whole result is rewritten each batch, can be sorted in the model."]
    ]
    said = capsys.readouterr().out
    assert "settings name no dialect" in said and "`dbt-spark-streaming init` writes them" in said


def test_a_project_that_names_its_dialect_keeps_its_own_settings(project, capsys):
    (project / ".sqlfluff").write_text("[sqlfluff]\ndialect = databricks\ntemplater = jinja\n")
    assert sql_linter(project).config.get("dialect") == "databricks"
    assert "no dialect" not in capsys.readouterr().out


def test_init_writes_the_starting_settings_once_and_never_over_the_projects_own(project, capsys):
    assert command_line.main(["init", "--project-dir", str(project)]) == 0
    assert (project / ".sqlfluff").read_text() == STARTING_SETTINGS.read_text()
    assert ".sqlfluff written" in capsys.readouterr().out
    assert lint_findings(project)  # read with the project's settings now: nothing said about them
    assert "no dialect" not in capsys.readouterr().out

    own = textwrap.dedent("""
        [sqlfluff]
        dialect = sparksql
        max_line_length = 80
    """)
    (project / ".sqlfluff").write_text(own)
    assert command_line.main(["init", "--project-dir", str(project)]) == 0
    assert (project / ".sqlfluff").read_text() == own
    assert ".sqlfluff written" not in capsys.readouterr().out
