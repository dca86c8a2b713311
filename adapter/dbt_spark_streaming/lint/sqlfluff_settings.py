"""sqlfluff's settings for a project's models: the project's own `.sqlfluff`, or the adapter's
starting one (sqlfluff.cfg: the sparksql dialect, the jinja templater with dbt's builtins).

sqlfluff refuses to parse without a dialect, and a project made with `dbt init` has no
`.sqlfluff`: `dbt-spark-streaming init` writes the starting one there, and the streaming lint
falls back to it while the project's settings name no dialect."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from sqlfluff.core import FluffConfig

STARTING_SETTINGS = Path(__file__).with_name("sqlfluff.cfg")
PROJECT_SETTINGS = ".sqlfluff"


def write_if_missing(project_dir: Path) -> Optional[Path]:
    """The starting settings written as the project's `.sqlfluff` unless it has one; the file
    written, or None. A project's own settings are never touched."""
    settings = project_dir / PROJECT_SETTINGS
    if settings.exists():
        return None
    settings.write_text(STARTING_SETTINGS.read_text())
    return settings


def project_config(project_dir: Path) -> tuple["FluffConfig", bool]:
    """(the settings the models are linted with, whether they are the starting ones because the
    project's name no dialect)."""
    from sqlfluff.core import FluffConfig

    own = FluffConfig.from_path(str(project_dir), require_dialect=False)
    if own.get("dialect"):
        return own, False
    return FluffConfig.from_path(str(project_dir), extra_config_path=str(STARTING_SETTINGS)), True
