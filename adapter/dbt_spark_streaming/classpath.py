"""The JVM libraries a Spark session loads beyond pyspark's own: Delta Lake's and Spark's Kafka
connector's.

They live in one folder per Spark and Delta version: SPARK_EXTRA_JARS_DIR, else the user's own
cache (`~/.cache/dbt-spark-streaming/`, under XDG_CACHE_HOME when set). The first session that
finds the folder empty has Spark resolve them from Maven Central itself while it starts
(spark.jars.packages, Ivy's files in the cache), then keeps the jars it fetched there: every
session after it starts without the network. This repository's `make setup` fills a folder of
its own with Maven instead, the Kafka connector and the metastore's JDBC driver included
(python_runners/infra/maven.py).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from importlib import metadata
from pathlib import Path
from typing import Iterable, Mapping

import pyspark

from dbt_spark_streaming.errors import StreamingError

PYSPARK_JARS = Path(pyspark.__file__).parent / "jars"
JARS_VARIABLE = "SPARK_EXTRA_JARS_DIR"
SCALA_BINARY = "2.13"
_VERSIONED_JAR = re.compile(r"^(?P<artifact>.+?)-(?P<version>\d[^-]*(?:-[^-]+)*)\.jar$")


class JarsMissingError(StreamingError, RuntimeError):
    pass


def delta_coordinates() -> str:
    """Delta's jar, the version of the delta-spark Python package that drives it."""
    spark = ".".join(pyspark.__version__.split(".")[:2])
    return f"io.delta:delta-spark_{spark}_{SCALA_BINARY}:{metadata.version('delta-spark')}"


# Spark's Kafka connector, for Kafka sources, at pyspark's own version.
KAFKA_CONNECTOR = f"org.apache.spark:spark-sql-kafka-0-10_{SCALA_BINARY}:{pyspark.__version__}"
# The JDBC driver of a shared Hive metastore in PostgreSQL (a cluster's metastore_url). Hive's
# client finds it on the driver's own class path only, so a session that needs it cannot be the
# one that fetches it: `dbt-spark-streaming jars` fetches everything ahead.
POSTGRESQL_DRIVER = "org.postgresql:postgresql:42.7.14"


# Hadoop's S3A connector, for lakehouse locations on s3a://: at pyspark's own Hadoop version, with
# the three AWS SDK modules it calls instead of the SDK's 690 MB bundle (jars/s3a/pom.xml pins the
# same for this repository). A session puts them on its class path only when it needs them.
AWS_SDK_VERSION = "2.35.4"  # what Hadoop 3.5.0 is built against
S3A_EXCLUDES = "software.amazon.awssdk:bundle"
S3A_FOLDER = "s3a"


def hadoop_version() -> str:
    """The Hadoop version pyspark ships (its hadoop-client-api jar)."""
    for jar in PYSPARK_JARS.glob("hadoop-client-api-*.jar"):
        match = _VERSIONED_JAR.match(jar.name)
        if match:
            return match.group("version")
    raise JarsMissingError(f"pyspark at {PYSPARK_JARS.parent} has no hadoop-client-api jar: reinstall pyspark.")


def s3a_packages() -> tuple[str, ...]:
    return (f"org.apache.hadoop:hadoop-aws:{hadoop_version()}",
            *(f"software.amazon.awssdk:{module}:{AWS_SDK_VERSION}"
              for module in ("s3", "s3-transfer-manager", "sts")))


def uses_s3a(locations: Iterable[str]) -> bool:
    return any(location.startswith("s3a://") for location in locations)


def s3a_jar_paths() -> list[str]:
    return sorted(str(jar) for jar in (JARS_DIR / S3A_FOLDER).glob("*.jar"))


def packages() -> tuple[str, ...]:
    """The Maven coordinates fetched on first use."""
    return (delta_coordinates(), KAFKA_CONNECTOR, POSTGRESQL_DRIVER)


def user_cache(environ: Mapping[str, str] = os.environ) -> Path:
    return Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dbt-spark-streaming"


def jars_dir(environ: Mapping[str, str] = os.environ) -> Path:
    configured = environ.get(JARS_VARIABLE)
    if configured:
        return Path(configured)
    # One folder per set of jars: another version of any of them is another folder.
    key = hashlib.sha256(",".join(packages()).encode()).hexdigest()[:12]
    return user_cache(environ) / "jars" / f"spark-{pyspark.__version__}-{key}"


JARS_DIR = jars_dir()


def jar_paths() -> list[str]:
    return sorted(str(jar) for jar in JARS_DIR.glob("*.jar"))


def class_paths(master: str, driver_jars: list[str] | None = None,
                s3a: bool = False) -> tuple[list[str], list[str]]:
    """(spark.jars, the driver JVM's own class path) for a session on `master`; `driver_jars`:
    what must be on the driver's class path whatever the master (a metastore's JDBC driver);
    `s3a`: with the S3A connector's jars.

    In local mode the jars go on the driver's class path, where the application class loader
    loads them: their classes can then be kept in the class-data archive (Java archives none
    that Spark's own jar loader loads), and the executor, in the same JVM, does not fetch a copy
    of each jar through Spark's file server (about 0.5 s of every start). A cluster's executors
    get them through spark.jars, as usual. In local mode the S3A jars are not among them:
    see `appended_class_path`."""
    if master.startswith("local"):
        return [], list(dict.fromkeys([*(driver_jars or []), *jar_paths()]))
    return jar_paths() + (s3a_jar_paths() if s3a else []), list(driver_jars or [])


# Spark's launcher puts this variable's entries on the driver JVM's class path after Spark's own
# jars, where the driver's extra class path comes before them.
DIST_CLASS_PATH_VARIABLE = "SPARK_DIST_CLASSPATH"


def appended_class_path(master: str, s3a: bool = False) -> list[str]:
    """What a local session's JVM gets at the end of its class path: the S3A jars, on s3a://.
    A class-data archive serves a JVM whose class path starts with the archive's own, so at the
    end they leave the one archive, made without them (jvm_options.py), to every session: on the
    extra class path a lakehouse on s3a:// had none, and each of its JVMs started without one
    (a no-op `dbt run` of the demo: 5 s more before the first model than on local disk)."""
    return s3a_jar_paths() if s3a and master.startswith("local") else []


def dist_class_path_with(current: str | None, entries: list[str]) -> str:
    """SPARK_DIST_CLASSPATH's value with `entries` after what it held (a Hadoop-free Spark's own
    Hadoop jars stay first)."""
    present = [entry for entry in (current or "").split(os.pathsep) if entry]
    return os.pathsep.join(dict.fromkeys([*present, *entries]))


def resolution_conf() -> dict[str, str]:
    """For a session started while JARS_DIR holds no jar: Spark fetches Delta Lake and its Kafka
    connector from Maven Central as it starts (its own Ivy resolution, into the user's cache)."""
    # Ivy copies what it resolves into <ivy home>/jars, which keep_resolved_jars takes whole: a
    # home of its own for each set of jars (JARS_DIR's name), so that the jars of a version
    # resolved before (Delta's for another Spark) never join them. Downloads are shared.
    shared = user_cache() / "ivy"
    ivy = shared / "homes" / JARS_DIR.name
    shutil.rmtree(ivy / "jars", ignore_errors=True)
    ivy.mkdir(parents=True, exist_ok=True)
    settings = ivy / "ivysettings.xml"
    settings.write_text(_IVY_SETTINGS.format(cache=shared / "cache", central=MAVEN_CENTRAL))
    return {"spark.jars.packages": ",".join(packages()), "spark.jars.ivy": str(ivy),
            "spark.jars.ivySettings": str(settings)}


MAVEN_CENTRAL = os.environ.get("SPARK_STREAMING_MAVEN_REPOSITORY", "https://repo1.maven.org/maven2/")
# Maven Central only. Spark's default chain also reads ~/.m2, where Maven often keeps a
# dependency's .pom without its .jar: Ivy then takes the module as found there and fails.
_IVY_SETTINGS = """<ivysettings>
  <settings defaultResolver="central"/>
  <caches defaultCacheDir="{cache}"/>
  <resolvers>
    <ibiblio name="central" m2compatible="true" root="{central}"/>
  </resolvers>
</ivysettings>
"""


def resolution_failed(error: BaseException) -> JarsMissingError:
    return JarsMissingError(
        f"Could not fetch Delta Lake's and the Kafka connector's jars ({delta_coordinates()}, "
        f"{KAFKA_CONNECTOR}) from Maven Central ({error}). "
        "Spark's own message is above. Check the network or the proxy (or point "
        f"SPARK_STREAMING_MAVEN_REPOSITORY at a mirror of Maven Central), or put the jars in {JARS_DIR} "
        f"yourself (or point {JARS_VARIABLE} at a folder that has them)."
    )


def keep_resolved_jars(ivy: str) -> list[str]:
    """After a session that resolved its jars: what Spark fetched, less what pyspark already
    ships, copied into JARS_DIR (staged, so a half copy is never taken for the folder)."""
    shipped = artifact_names(PYSPARK_JARS.glob("*.jar"))
    staging = JARS_DIR.with_name(JARS_DIR.name + ".staging")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for jar in Path(ivy, "jars").glob("*.jar"):
        name = jar.name.split("_", 1)[-1]  # Ivy names them <group>_<artifact>-<version>.jar
        if artifact_name(name) not in shipped:
            shutil.copy2(jar, staging / name)
    shutil.rmtree(JARS_DIR, ignore_errors=True)
    staging.rename(JARS_DIR)
    return jar_paths()


def artifact_name(file_name: str) -> str:
    match = _VERSIONED_JAR.match(file_name)
    return match.group("artifact") if match else file_name


def artifact_names(jars: Iterable[Path]) -> set[str]:
    return {artifact_name(jar.name) for jar in jars}


# A bare session whose start has Spark's Ivy resolve the S3A jars (no Delta, no Hive): run as
# `python -c` in a process of its own, the JVM then gone.
_RESOLVE_S3A = """
import sys
from pyspark.sql import SparkSession
packages, excludes, ivy, settings = sys.argv[1:5]
builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
for key, value in (("spark.jars.packages", packages), ("spark.jars.excludes", excludes),
                   ("spark.jars.ivy", ivy), ("spark.jars.ivySettings", settings)):
    builder = builder.config(key, value)
builder.getOrCreate().stop()
"""


def fetch_s3a_jars() -> list[str]:
    """The S3A connector's jars, resolved from Maven Central into JARS_DIR/s3a once."""
    if s3a_jar_paths():
        return s3a_jar_paths()
    import subprocess
    import sys

    shared = user_cache() / "ivy"
    ivy = shared / "homes" / f"{JARS_DIR.name}-{S3A_FOLDER}"
    shutil.rmtree(ivy / "jars", ignore_errors=True)
    ivy.mkdir(parents=True, exist_ok=True)
    settings = ivy / "ivysettings.xml"
    settings.write_text(_IVY_SETTINGS.format(cache=shared / "cache", central=MAVEN_CENTRAL))
    result = subprocess.run(
        [sys.executable, "-c", _RESOLVE_S3A, ",".join(s3a_packages()), S3A_EXCLUDES, str(ivy), str(settings)],
        capture_output=True, text=True)
    if result.returncode != 0:
        raise JarsMissingError(
            f"Could not fetch the S3A connector's jars ({', '.join(s3a_packages())}) from Maven "
            f"Central, which a lakehouse on s3a:// needs. Spark said:\n{result.stderr[-3000:]}\n"
            "Check the network or the proxy (or point SPARK_STREAMING_MAVEN_REPOSITORY at a mirror), "
            f"or put the jars in {JARS_DIR / S3A_FOLDER} yourself.")
    shipped = artifact_names(PYSPARK_JARS.glob("*.jar")) | artifact_names(Path(jar) for jar in jar_paths())
    staging = JARS_DIR / f"{S3A_FOLDER}.staging"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for jar in Path(ivy, "jars").glob("*.jar"):
        name = jar.name.split("_", 1)[-1]
        if artifact_name(name) not in shipped:
            shutil.copy2(jar, staging / name)
    shutil.rmtree(JARS_DIR / S3A_FOLDER, ignore_errors=True)
    staging.rename(JARS_DIR / S3A_FOLDER)
    return s3a_jar_paths()
