"""Audit a lakehouse from a process of its own: every landed record once in each layer, gold
equal to a recompute, the cdc tables equal to the reference; one JSON line on stdout.

    python -m python_runners.testing.lakehouse_audit <recordings folder> <changes folder> [<spark conf JSON>]

The lakehouse is the environment's (LAKEHOUSE_DIR and friends); the folders are where the landed
files can be read as local files (for a lakehouse on the loopback S3 store: its back end's).
A test process that starts no JVM of its own checks a pipeline's outcome with it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from python_runners.testing.chaos.audit import audit


def main(argv: list[str]) -> int:
    folder, changes = Path(argv[0]), Path(argv[1])
    extra_conf = json.loads(argv[2]) if len(argv) > 2 else {}
    from dbt_spark_streaming.session import get_or_create_session

    result = audit(get_or_create_session(extra_conf=extra_conf), folder, changes)
    print(json.dumps({"landed": result.landed, "lost": result.lost, "duplicated": result.duplicated,
                      "gold_mismatches": result.gold_mismatches, "cdc_mismatches": result.cdc_mismatches,
                      "passed": result.passed}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
