"""The JVM libraries Spark loads beyond pyspark's own: Delta Lake (and later connectors).

`python -m python_runners.jars fetch` copies them from Maven Central into `.jars/` once, with the
versions pinned in `jars/pom.xml`; every Spark session after that starts without the network.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyspark

from python_runners.lakehouse import REPO_ROOT

POM = REPO_ROOT / "jars" / "pom.xml"
JARS_DIR = Path(os.environ.get("SPARK_EXTRA_JARS_DIR", REPO_ROOT / ".jars"))
PYSPARK_JARS = Path(pyspark.__file__).parent / "jars"
_VERSIONED_JAR = re.compile(r"^(?P<artifact>.+?)-(?P<version>\d[^-]*(?:-[^-]+)*)\.jar$")


class JarsMissingError(RuntimeError):
    pass


def jar_paths() -> list[str]:
    jars = sorted(str(jar) for jar in JARS_DIR.glob("*.jar"))
    if not jars:
        raise JarsMissingError(
            f"No Spark jars in {JARS_DIR}. Fetch Delta Lake's jars from Maven Central once with "
            "`make setup` (or `python -m python_runners.jars fetch`)."
        )
    return jars


def fetch() -> list[str]:
    """Copy the pinned jars and their runtime dependencies, minus what pyspark already ships."""
    staging = JARS_DIR.with_name(JARS_DIR.name + ".staging")
    shutil.rmtree(staging, ignore_errors=True)
    subprocess.run(
        [
            "mvn", "--batch-mode", "--quiet", "-f", str(POM),
            "dependency:copy-dependencies", "-DincludeScope=runtime",
            f"-DoutputDirectory={staging}",
        ],
        check=True,
    )
    shipped = _artifact_names(PYSPARK_JARS)
    for jar in staging.glob("*.jar"):
        if _artifact_name(jar.name) in shipped:
            jar.unlink()
    shutil.rmtree(JARS_DIR, ignore_errors=True)
    staging.rename(JARS_DIR)
    return jar_paths()


def _artifact_name(file_name: str) -> str:
    match = _VERSIONED_JAR.match(file_name)
    return match.group("artifact") if match else file_name


def _artifact_names(folder: Path) -> set[str]:
    return {_artifact_name(jar.name) for jar in folder.glob("*.jar")}


if __name__ == "__main__":
    if sys.argv[1:] != ["fetch"]:
        sys.exit("usage: python -m python_runners.jars fetch")
    for path in fetch():
        print(path)
