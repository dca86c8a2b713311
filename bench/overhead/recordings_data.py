"""Many device recordings at once, as the demo's landing folder holds them (JSON lines).

The demo's own generator writes rows from Python, fine for hundreds; the overhead benchmark needs
millions, so Spark writes them. Same fields and value ranges as python_runners.demo.data's good
records: none breaks silver's expectations, so every row reaches gold on both benchmark sides.

    .venv/bin/python -m bench.overhead.recordings_data --rows 5000000 --files 40 --folder <landing>/recordings
"""

from __future__ import annotations

import argparse
import os

from python_runners.demo.data import DEVICES, FIRST_BATCH_EPOCH, PATIENTS
from python_runners.testing.separate_lakehouse import use_separate_lakehouse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.overhead.recordings_data")
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--files", type=int, required=True)
    parser.add_argument("--folder", required=True)
    args = parser.parse_args(argv)

    use_separate_lakehouse(os.path.join(args.folder, ".generator"))  # its metastore, not ours
    from dbt_spark_streaming.session import get_or_create_session

    spark = get_or_create_session()
    recordings = spark.range(args.rows).selectExpr(
        "concat('r', lpad(cast(id as string), 10, '0')) as recording_id",
        f"cast(id * 7 % {DEVICES} as int) as device_id",
        f"100000 + id * 13 % {PATIENTS} as mrn",
        f"{FIRST_BATCH_EPOCH} + id as time",
        "round(40 + (id * 7919 % 1400) / 10.0, 1) as heartbeat",
    )
    recordings.repartition(args.files).write.mode("overwrite").json(os.path.join(args.folder, "recordings"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
