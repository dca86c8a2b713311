"""The SQL lint that `make lint` runs: no Spark needed, fails on style, passes the project."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from python_runners.lakehouse import REPO_ROOT

SQLFLUFF = str(Path(sys.executable).with_name("sqlfluff"))
BAD_MODEL = "tests/fixtures/lint/badly_formatted_model.sql"


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
