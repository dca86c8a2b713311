"""Small dbt projects for tests: streaming_table models that use this repository's macros."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Mapping

from python_runners import PROJECT_MACROS, REPO_ROOT

# The repository's models that run a streaming query (streaming_table or cdc_table): all but the
# batch-recomputed gold.recordings_with_patient_ward and the ephemeral patient_changes_readable
# (inlined into the two cdc_tables).
DEMO_STREAMING_MODELS = sorted(
    path.stem for path in (REPO_ROOT / "models").rglob("*.sql")
    if path.stem not in {"recordings_with_patient_ward", "patient_changes_readable"}
)

# An always-on project's hook: a run ends serving its streaming queries instead of stopping them.
SERVE_AFTER_RUN = 'on-run-end:\n  - "{{ serve_streaming_queries() }}"\n'


def write_streaming_project(
    root: Path, name: str, schema: str, models: Mapping[str, str], sources: str = "",
    serve_after_run: bool = False,
) -> Path:
    """A project `name` whose models (name: SQL) are streaming tables in `schema`; `sources`: its
    models/sources.yml; `serve_after_run`: with SERVE_AFTER_RUN."""
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(textwrap.dedent(f"""
        name: {name}
        config-version: 2
        profile: streaming_lakehouse
        vars: {{production_targets: [local, cluster]}}  # as the repository's dbt_project.yml
        macro-paths: ["{REPO_ROOT / 'macros'}", "{PROJECT_MACROS}"]  # the root project's ref() and source() overrides
        models:
          {name}:
            +materialized: streaming_table
            +schema: {schema}
    """) + (SERVE_AFTER_RUN if serve_after_run else ""))
    for model, sql in models.items():
        (root / "models" / f"{model}.sql").write_text(sql + "\n")
    if sources:
        (root / "models" / "sources.yml").write_text(sources)
    return root

