"""The dbt project of the incremental-vs-recompute benchmark: one pipeline, three materialisations.

A silver model (clean each event) and a gold model (totals per account) over a Delta table of
events, written three times with the same SQL: as streaming tables (this project's), as dbt-spark
`table` models (each run recomputes everything) and as dbt-spark `incremental` models (merge,
filtered to what is newer than the target holds: the usual hand-written pattern).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from python_runners import PROJECT_MACROS, REPO_ROOT

PROJECT = "bench_recompute"
# variant -> the schema its tables go to
SCHEMAS = {"streaming": "streaming", "table": "recompute", "incremental": "incremental"}
VARIANTS = tuple(SCHEMAS)
EVENTS_FOLDER = "events"  # under the lakehouse's landing folder

CLEAN_SQL = """
select
    event_id,
    account_id,
    cast(amount as decimal(12, 2)) as amount,
    upper(country) as country,
    event_time
from {events}
where amount is not null
"""

TOTALS_SQL = """
select
    account_id,
    count(*) as events,
    sum(amount) as amount,
    max(event_time) as last_event_time
from {clean}
{where}group by account_id
"""

INCREMENTAL_CLEAN_FILTER = """
{% if is_incremental() %}
    and event_time > (select max(event_time) from {{ this }})
{% endif %}
"""

# Recompute the accounts that have new events; merge replaces their rows.
INCREMENTAL_TOTALS_FILTER = """{% if is_incremental() %}
where account_id in (
    select account_id from {{ ref('clean_events__incremental') }}
    where event_time > (select max(last_event_time) from {{ this }})
)
{% endif %}
"""


def clean_model(variant: str) -> str:
    sql = CLEAN_SQL.format(events="{{ source('bench', 'events') }}")
    if variant == "incremental":
        sql += INCREMENTAL_CLEAN_FILTER
    return sql


def totals_model(variant: str) -> str:
    clean = f"{{{{ ref('clean_events__{variant}') }}}}"
    if variant == "streaming":
        clean = f"stream({clean})"
    where = INCREMENTAL_TOTALS_FILTER if variant == "incremental" else ""
    return TOTALS_SQL.format(clean=clean, where=where)


def write_project(root: Path) -> Path:
    models = root / "models"
    for variant in VARIANTS:
        (models / variant).mkdir(parents=True, exist_ok=True)
        (models / variant / f"clean_events__{variant}.sql").write_text(clean_model(variant))
        (models / variant / f"account_totals__{variant}.sql").write_text(totals_model(variant))
    (models / "sources.yml").write_text(textwrap.dedent(f"""
        version: 2
        sources:
          - name: bench
            tables:
              - name: events
                meta:
                  stream:
                    format: delta
                    path: {EVENTS_FOLDER}
    """))
    (root / "dbt_project.yml").write_text(textwrap.dedent(f"""
        name: {PROJECT}
        config-version: 2
        profile: streaming_lakehouse
        vars: {{production_targets: [local, cluster]}}  # as the repository's dbt_project.yml
        macro-paths: ["{REPO_ROOT / 'macros'}", "{PROJECT_MACROS}"]
        models:
          {PROJECT}:
            +file_format: delta
            streaming:
              +schema: {SCHEMAS['streaming']}
              +materialized: streaming_table
              account_totals__streaming:
                +output_mode: complete
            table:
              +schema: {SCHEMAS['table']}
              +materialized: table
            incremental:
              +schema: {SCHEMAS['incremental']}
              +materialized: incremental
              +incremental_strategy: merge
              clean_events__incremental:
                +unique_key: event_id
              account_totals__incremental:
                +unique_key: account_id
    """))
    return root


def gold_table(variant: str) -> str:
    return f"{SCHEMAS[variant]}.account_totals__{variant}"
