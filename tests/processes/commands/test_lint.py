"""The SQL lint that `make lint` runs: no Spark needed, fails on style, passes the project."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sqlfluff.core import FluffConfig, Linter

from python_runners import REPO_ROOT
from dbt_spark_streaming.lint.streaming_lint import StreamingModel, findings
from python_runners.testing.command_line import run_command_line
from streaming_projects import DEMO_STREAMING_MODELS

SQLFLUFF = str(Path(sys.executable).with_name("sqlfluff"))
BAD_MODEL = "tests/fixtures/lint/badly_formatted_model.sql"
STREAMING_FIXTURE = "tests/fixtures/streaming_lint"


def lint(*paths: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [SQLFLUFF, "lint", *paths], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )


def test_lint_passes_the_projects_models():
    result = lint("models")
    assert result.returncode == 0, result.stdout + result.stderr


def test_lint_fails_a_badly_formatted_model():
    result = lint(BAD_MODEL)
    assert result.returncode == 1, result.stdout + result.stderr
    for rule in ("capitalisation.keywords", "aliasing.column", "aliasing.table"):
        assert rule in result.stdout, f"{rule} not reported:\n{result.stdout}"


def streaming_lint(*args: str) -> subprocess.CompletedProcess:
    return run_command_line(["lint", *args])


def test_streaming_lint_passes_the_projects_models():
    result = streaming_lint()
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(DEMO_STREAMING_MODELS)} streaming models, 0 problems" in result.stdout


def test_streaming_lint_flags_what_a_stream_cannot_run():
    result = streaming_lint("--project-dir", STREAMING_FIXTURE)
    assert result.returncode == 1, result.stdout + result.stderr
    flagged = sorted(
        (line.split(": ")[0], line.split(" uses ")[1].split(", which")[0])
        for line in result.stdout.splitlines() if " uses " in line
    )
    models = f"{STREAMING_FIXTURE}/models"
    assert flagged == [
        (f"{models}/ranked_events.sql:3:5", "a DISTINCT aggregation"),
        (f"{models}/ranked_events.sql:4:18", "a window function (OVER ...)"),
        (f"{models}/ranked_events.sql:7:1", "LIMIT"),
        (f"{models}/sorted_events.sql:5:1", "ORDER BY"),
    ]  # not the batch model's ORDER BY, nor the complete-mode aggregate's, nor OVER's own
    assert "Sort when you read the table instead" in result.stdout
    # a config a run would refuse is reported as the run would report it
    assert (f"{models}/upserted_events.sql:1:1: Model upserted_events: output_mode 'upsert' is "
            "not supported by streaming_table.") in result.stdout


def project_linter() -> Linter:
    """sqlfluff with the project's .sqlfluff, as `make lint` runs it."""
    return Linter(config=FluffConfig.from_path(str(REPO_ROOT)))


def violations(sql: str) -> list[str]:
    linted = project_linter().lint_string(sql)
    return [f"L{v.line_no} {v.rule_code()}: {v.desc()}" for v in linted.get_violations()]


# A fenced ```sql block, at any indent (inside a list item too).
SQL_BLOCK = re.compile(r"^( *)```sql\n(.*?)^\1```", re.S | re.M)


# The README and the pages its examples moved to (docs/lint.md says so).
DOCS_WITH_LINTED_SQL = ("README.md", "docs/streaming-table.md", "docs/operating.md")


def readme_sql_examples() -> list[str]:
    examples = []
    for doc in DOCS_WITH_LINTED_SQL:
        text = (REPO_ROOT / doc).read_text()
        found = [textwrap.dedent(body) for _, body in SQL_BLOCK.findall(text)]
        assert len(found) == text.count("```sql"), f"a ```sql block in {doc} the pattern did not match"
        examples += found
    return examples


@pytest.mark.parametrize("example", readme_sql_examples(), ids=lambda sql: sql.splitlines()[0][:40])
def test_readme_sql_examples_pass_the_lint(example, tmp_path):
    assert violations(example) == [], example
    shutil.copy(REPO_ROOT / ".sqlfluff", tmp_path)  # sqlfluff reads the config beside the file
    model = tmp_path / "readme_example.sql"
    model.write_text(example)
    as_streaming_model = StreamingModel("readme_example", model, output_mode="append")
    assert [str(f) for f in findings(as_streaming_model, project_linter())] == [], example


DBT_SHAPES = {
    "select from a source": "select * from {{ source('landing', 'recordings') }}\n",
    "select from a ref": "select * from {{ ref('silver_recordings') }}\n",
    "a stream of a ref": "select * from stream({{ ref('silver_recordings') }})\n",
    "import CTEs, renamed": textwrap.dedent("""\
        with

        source as (

            select * from {{ source('ecom', 'raw_customers') }}

        ),

        renamed as (

            select
                id as customer_id,
                name as customer_name
            from source

        )

        select * from renamed
    """),
    "incremental, group by position": textwrap.dedent("""\
        {{ config(materialized='incremental') }}

        with orders as (

            select * from {{ ref('stg_orders') }}

            {% if is_incremental() %}
                where ordered_at > (select max(ordered_at) from {{ this }})
            {% endif %}

        )

        select
            customer_id,
            count(*) as order_count
        from orders
        group by 1
    """),
}


@pytest.mark.parametrize("shape", DBT_SHAPES)
def test_ordinary_dbt_model_shapes_pass_the_lint(shape):
    assert violations(DBT_SHAPES[shape]) == []
