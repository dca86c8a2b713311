"""Copying pinned JVM libraries from Maven Central: Spark's (jars/pom.xml) and the test Kafka broker's.

`python -m python_runners jars` runs `fetch` once per clone (make setup does); after that every
Spark session starts without the network.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Callable

from dbt_spark_streaming.classpath import (
    JARS_DIR, PYSPARK_JARS, S3A_FOLDER, artifact_name, artifact_names, jar_paths, s3a_jar_paths,
)
from python_runners import REPO_ROOT

POM = REPO_ROOT / "jars" / "pom.xml"


S3A_POM = REPO_ROOT / "jars" / "s3a" / "pom.xml"


def fetch() -> list[str]:
    """Copy the pinned jars and their runtime dependencies, minus what pyspark already ships;
    then the S3A connector's into their own folder, minus what those two have."""
    shipped = artifact_names(PYSPARK_JARS.glob("*.jar"))
    copy_maven_dependencies(POM, JARS_DIR, keep=lambda jar: artifact_name(jar.name) not in shipped)
    shipped |= artifact_names(Path(jar) for jar in jar_paths())
    copy_maven_dependencies(S3A_POM, JARS_DIR / S3A_FOLDER, keep=lambda jar: artifact_name(jar.name) not in shipped)
    return jar_paths() + s3a_jar_paths()


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
