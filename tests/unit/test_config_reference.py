"""docs/config-reference.md against the settings the materialisations declare
(python_runners/ops/config_reference.py, run by `make lint` with --check)."""

from __future__ import annotations

from dbt_spark_streaming.config import settings
from python_runners.ops import config_reference
from python_runners.ops.config_reference import (
    REFERENCE, keys_without_row, main, missing_descriptions, problems, reference_text,
)


def test_the_committed_reference_is_up_to_date():
    assert problems() == [], f"run `{config_reference.COMMAND}`"


def test_every_key_of_every_materialisation_is_described_and_has_a_row():
    assert missing_descriptions() == []
    assert keys_without_row(REFERENCE.read_text(encoding="utf-8")) == []
    assert set(config_reference.MATERIALISATIONS) == set(settings.SETTINGS)
    text = reference_text()
    for materialized, keys in settings.SETTINGS.items():
        section = text.split(f"## {materialized}\n", 1)[1].split("\n## ", 1)[0]
        for key in keys:
            row = next(line for line in section.splitlines() if line.startswith(f"| `{key}` |"))
            what, default = row.split(" | ")[1:3]
            assert what and default, row


def test_a_setting_declared_without_a_description_fails_the_check_naming_it(monkeypatch, capsys):
    planted = {**settings.SETTINGS, "copy_into": (*settings.SETTINGS["copy_into"], "files_at_once")}
    monkeypatch.setattr(settings, "SETTINGS", planted)
    found = problems()
    assert any(p.startswith("copy_into.files_at_once has no description") for p in found), found
    assert "copy_into.files_at_once has no row in config-reference.md" in found
    assert any("not up to date" in p for p in found)
    assert main(["--check"]) == 1
    assert "copy_into.files_at_once has no description" in capsys.readouterr().out


def test_a_key_whose_row_went_missing_is_named(tmp_path):
    page = tmp_path / "config-reference.md"
    page.write_text("\n".join(line for line in reference_text().splitlines()
                              if not line.startswith("| `tombstone_retention` |")) + "\n")
    found = problems(page)
    assert "cdc_table.tombstone_retention has no row in config-reference.md" in found
    assert "streaming_table.tombstone_retention" not in " ".join(found)


def test_writing_refuses_while_a_setting_has_no_description(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(config_reference, "REFERENCE", tmp_path / "config-reference.md")
    monkeypatch.setattr(config_reference, "missing_descriptions", lambda: ["streaming_table.planted"])
    assert main([]) == 1
    assert "streaming_table.planted" in capsys.readouterr().err
    assert not (tmp_path / "config-reference.md").exists()
