"""The Kafka broker's jars, for tests that run a real broker: kept apart from Spark's classpath.

`python -m python_runners jars --kafka-broker` (or `make kafka-jars`) copies the release pinned
in `jars/kafka-broker/pom.xml` from Maven Central into `.jars-kafka-broker/` once.
"""

from __future__ import annotations

import os
from pathlib import Path

from python_runners.infra.maven import copy_maven_dependencies
from python_runners import REPO_ROOT

POM = REPO_ROOT / "jars" / "kafka-broker" / "pom.xml"
JARS_DIR = Path(os.environ.get("KAFKA_BROKER_JARS_DIR", REPO_ROOT / ".jars-kafka-broker"))


class KafkaBrokerJarsMissingError(RuntimeError):
    pass


def classpath(jars_dir: Path = JARS_DIR) -> str:
    """The broker's classpath, a `folder/*` wildcard the JVM expands."""
    if not any(Path(jars_dir).glob("kafka_2.13-*.jar")):
        raise KafkaBrokerJarsMissingError(
            f"No Kafka broker jars in {jars_dir}. Fetch them from Maven Central once with "
            "`make kafka-jars` (or `python -m python_runners jars --kafka-broker`)."
        )
    return str(Path(jars_dir) / "*")


def fetch() -> list[str]:
    copy_maven_dependencies(POM, JARS_DIR)
    return sorted(str(jar) for jar in JARS_DIR.glob("*.jar"))
