"""The JVM libraries Spark loads beyond pyspark's own: Delta Lake and the Kafka connector.

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
from typing import Callable

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
            f"No Spark jars in {JARS_DIR}. Fetch Delta Lake's and the Kafka connector's jars from "
            "Maven Central once with `make setup` (or `python -m python_runners.jars fetch`)."
        )
    return jars


def fetch() -> list[str]:
    """Copy the pinned jars and their runtime dependencies, minus what pyspark already ships."""
    shipped = _artifact_names(PYSPARK_JARS)
    copy_maven_dependencies(POM, JARS_DIR, keep=lambda jar: _artifact_name(jar.name) not in shipped)
    return jar_paths()


def copy_maven_dependencies(
    pom: Path, folder: Path, keep: Callable[[Path], bool] = lambda jar: True
) -> None:
    """Replace `folder` with the pom's runtime dependencies that `keep` accepts.

    Copied into a staging folder first, so a failed download leaves the previous folder whole.
    """
    staging = folder.with_name(folder.name + ".staging")
    shutil.rmtree(staging, ignore_errors=True)
    subprocess.run(
        [
            "mvn", "--batch-mode", "--quiet", "-f", str(pom),
            "dependency:copy-dependencies", "-DincludeScope=runtime",
            f"-DoutputDirectory={staging}",
        ],
        check=True,
    )
    for jar in staging.glob("*.jar"):
        if not keep(jar):
            jar.unlink()
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)


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
