"""The SQL lint that `make lint` runs: no Spark needed, fails on style, passes the project."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from python_runners.lakehouse import REPO_ROOT

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
    return subprocess.run(
        [sys.executable, "-m", "python_runners.streaming_lint", *args],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
    )


def test_streaming_lint_passes_the_projects_models():
    result = streaming_lint()
    assert result.returncode == 0, result.stdout + result.stderr
    models = len(list((REPO_ROOT / "models").rglob("*.sql")))  # every one is a streaming table
    assert f"{models} streaming models, 0 problems" in result.stdout


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
