"""Where a session keeps its catalog: embedded Derby (one process) or a shared JDBC database.

The embedded default is a Derby database in a folder of the lakehouse: no server, but only one
JVM can open it at a time. A JDBC URL (`jdbc:postgresql://...`) puts Spark's Hive metastore in a
database server instead, which any number of processes can use at once: an always-on service and
someone's query, or drivers on several machines.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from dbt_spark_streaming.classpath import JARS_DIR, jar_paths
from dbt_spark_streaming.errors import ConfigError

URL_VARIABLE = "LAKEHOUSE_METASTORE_URL"
# Spark's settings for the metastore's database (the user and password may be in the URL instead).
METASTORE_URL_KEY = "spark.hadoop.javax.jdo.option.ConnectionURL"
METASTORE_USER_KEY = "spark.hadoop.javax.jdo.option.ConnectionUserName"
METASTORE_PASSWORD_KEY = "spark.hadoop.javax.jdo.option.ConnectionPassword"

# Per kind of JDBC URL: the driver class and the jar (pinned in jars/pom.xml) that holds it.
_DRIVERS = {
    "postgresql": ("org.postgresql.Driver", "postgresql-"),
}


class MetastoreConfigError(ConfigError):
    pass


def configured_url(explicit: Optional[str] = None) -> Optional[str]:
    """The shared metastore's JDBC URL: the profile's `metastore_url`, else LAKEHOUSE_METASTORE_URL."""
    return explicit or os.environ.get(URL_VARIABLE) or None


def metastore_conf(folder: str, url: Optional[str]) -> dict[str, str]:
    """Spark settings for the Hive metastore: Derby under `folder`, or the database at `url`."""
    if not url:
        return {
            METASTORE_URL_KEY: (
                f"jdbc:derby:;databaseName={folder}/metastore_db;create=true"
            ),
        }
    return {
        METASTORE_URL_KEY: url,
        "spark.hadoop.javax.jdo.option.ConnectionDriverName": _driver(url)[0],
        # Hive's own tables are created on first use (and the version check that expects Hive's
        # schema tool to have run is off): nothing to install beyond the empty database. Without
        # foreign keys: adding one waits, in PostgreSQL, on a lock that the metastore's other open
        # transaction holds, and the first CREATE TABLE would hang for good.
        "spark.hadoop.datanucleus.schema.autoCreateTables": "true",
        "spark.hadoop.datanucleus.schema.autoCreateColumns": "true",
        "spark.hadoop.datanucleus.schema.autoCreateConstraints": "false",
        "spark.hadoop.hive.metastore.schema.verification": "false",
    }


def derby_java_options(folder: str, url: Optional[str]) -> list[str]:
    if url:
        return []
    return [f"-Dderby.system.home={folder}", f"-Dderby.stream.error.file={folder}/derby.log"]


def _driver(url: str) -> tuple[str, str]:
    """(driver class, jar name prefix) for the URL's kind of database."""
    kind = url.split(":")[1] if url.startswith("jdbc:") and url.count(":") >= 2 else ""
    if kind not in _DRIVERS:
        raise MetastoreConfigError(
            f"Metastore URL {url!r} is not one this project has a JDBC driver for "
            f"({', '.join(f'jdbc:{k}://...' for k in _DRIVERS)}). Set {URL_VARIABLE} (or the "
            f"profile's metastore_url) to a PostgreSQL URL such as "
            f"jdbc:postgresql://127.0.0.1:5433/metastore?user=hive, or unset it for embedded Derby."
        )
    return _DRIVERS[kind]


def driver_jars(url: Optional[str]) -> list[str]:
    """What the driver JVM's own class path needs for the metastore at `url` (none for Derby):
    Hive's client finds JDBC drivers through it, not through spark.jars."""
    return [_driver_jar(url)] if url else []


def _driver_jar(url: str) -> str:
    prefix = _driver(url)[1]
    jars = [jar for jar in jar_paths() if Path(jar).name.startswith(prefix)]
    if not jars:
        raise MetastoreConfigError(
            f"No JDBC driver jar {prefix}*.jar in {JARS_DIR} for the metastore at {url!r}. Fetch "
            "the jars once with `dbt-spark-streaming jars` (in this repository: `make setup`)."
        )
    return jars[0]
