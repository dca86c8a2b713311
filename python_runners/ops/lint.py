"""`python -m python_runners lint` (make lint): the installed streaming lint on this repository,
with its profiles/."""

from __future__ import annotations

import sys

from dbt_spark_streaming.lint import streaming_lint
from python_runners import REPO_ROOT


def main(argv: list[str] | None = None) -> int:
    return streaming_lint.main(argv, project_dir=REPO_ROOT, profiles_dir=REPO_ROOT / "profiles")


if __name__ == "__main__":
    sys.exit(main())
