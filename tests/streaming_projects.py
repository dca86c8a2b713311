"""Small dbt projects for tests: streaming_table models that use this repository's macros."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Mapping

from python_runners.runtime.lakehouse import REPO_ROOT


def write_streaming_project(root: Path, name: str, schema: str, models: Mapping[str, str]) -> Path:
    """A project `name` whose models (name: SQL) are streaming tables in `schema`."""
    (root / "models").mkdir()
    (root / "dbt_project.yml").write_text(textwrap.dedent(f"""
        name: {name}
        config-version: 2
        profile: streaming_lakehouse
        macro-paths: ["{REPO_ROOT / 'macros'}"]  # the root project's ref() and source() overrides
        models:
          {name}:
            +materialized: streaming_table
            +schema: {schema}
    """))
    for model, sql in models.items():
        (root / "models" / f"{model}.sql").write_text(sql + "\n")
    return root
