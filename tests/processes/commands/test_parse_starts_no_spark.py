"""`dbt parse`, `dbt ls` and `dbt compile` of the demo start no Spark for a meta.stream source: no
landing folder is listed or created, no schema inferred or stored, no metastore opened. In a
process of its own, which is the point: the suite's own process has a JVM.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from python_runners import REPO_ROOT
from python_runners.testing.separate_lakehouse import separate_lakehouse_env

# In a process of its own, on an empty lakehouse: the demo project (this repository).
DBT_WITHOUT_SPARK = textwrap.dedent("""
    import json, sys
    from pyspark import SparkContext
    from dbt_spark_streaming import session
    from python_runners.ops.dbt_invocation import invoke_dbt, target_args

    succeeded = {}
    for command in (["parse"], ["ls"], ["compile"]):
        result = invoke_dbt([*command, *target_args(sys.argv[1])])
        succeeded[command[0]] = result.success
    print(json.dumps({
        "succeeded": succeeded,
        "spark_started": session.active_session() is not None
            or SparkContext._active_spark_context is not None,
    }))
""")


def files_under(folder: Path) -> list[str]:
    return sorted(
        str(Path(root, name).relative_to(folder))
        for root, dirs, files in os.walk(folder) for name in dirs + files
    )


def test_parse_ls_and_compile_of_the_demo_start_no_spark_and_write_nothing(tmp_path):
    lakehouse = tmp_path / "lakehouse"
    lakehouse.mkdir()
    env = separate_lakehouse_env(lakehouse)  # every part under the empty folder

    done = subprocess.run(
        [sys.executable, "-c", DBT_WITHOUT_SPARK, str(tmp_path / "target")],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300,
    )

    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome == {
        "succeeded": {"parse": True, "ls": True, "compile": True}, "spark_started": False,
    }, done.stdout[-3000:]
    # No landing folder (the demo's sources say create_path: true), no schema versions
    # (checkpoints/_source_schemas), no metastore, run lock or Spark log.
    assert files_under(lakehouse) == []
    compiled = (tmp_path / "target" / "compiled" / "streaming_lakehouse" / "models" / "bronze"
                / "bronze_recordings.sql").read_text()
    assert "stream_source__landing__recordings" in compiled
