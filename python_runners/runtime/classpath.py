"""The JVM libraries a Spark session loads beyond pyspark's own: Delta Lake and the Kafka connector.

They are copied from Maven Central into `.jars/` once (`python -m python_runners jars`, see
infra/maven.py); every Spark session after that starts without the network.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyspark

from python_runners.runtime.lakehouse import REPO_ROOT
from python_runners.runtime.errors import StreamingError

JARS_DIR = Path(os.environ.get("SPARK_EXTRA_JARS_DIR", REPO_ROOT / ".jars"))
PYSPARK_JARS = Path(pyspark.__file__).parent / "jars"


class JarsMissingError(StreamingError, RuntimeError):
    pass


def jar_paths() -> list[str]:
    jars = sorted(str(jar) for jar in JARS_DIR.glob("*.jar"))
    if not jars:
        raise JarsMissingError(
            f"No Spark jars in {JARS_DIR}. Fetch Delta Lake's and the Kafka connector's jars from "
            "Maven Central once with `make setup` (or `python -m python_runners jars`)."
        )
    return jars


def class_paths(master: str, driver_jars: list[str] | None = None) -> tuple[list[str], list[str]]:
    """(spark.jars, the driver JVM's own class path) for a session on `master`; `driver_jars`:
    what must be on the driver's class path whatever the master (a metastore's JDBC driver).

    In local mode the jars go on the driver's class path, where the application class loader
    loads them: their classes can then be kept in the class-data archive (Java archives none
    that Spark's own jar loader loads), and the executor, in the same JVM, does not fetch a copy
    of each jar through Spark's file server (about 0.5 s of every start). A cluster's executors
    get them through spark.jars, as usual."""
    jars = jar_paths()
    if master.startswith("local"):
        return [], list(dict.fromkeys([*(driver_jars or []), *jars]))
    return jars, list(driver_jars or [])
