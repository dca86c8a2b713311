"""The options the driver's JVM starts with to start sooner: a class-data archive (AppCDS).

A short command (`show tables`, a dbt parse that lists relations) spends most of its seconds
loading and verifying Spark's, Hive's and Delta's classes. Java (17 and later) can keep those classes,
parsed and verified, in an archive that the next JVMs map from disk (`-XX:SharedArchiveFile`).
Measured on 2 cores (fresh processes, medians): the session's start 4.7 -> 2.7 s, its first
`show tables` (Hive client + Derby) 3.2 -> 1.8 s, the whole process 8.5 -> 5.2 s; the driver's
CPU time 16 -> 9.5 s. The archive takes about 230 MB on disk and a minute to make.

Java archives only the classes of its own class loaders, so in local mode Delta's and Kafka's jars
go on the driver's class path rather than spark.jars (classpath.py): with them in the archive too,
the session's start went from 3.6 to 2.8 s (with the archive both times).

Measured and not kept: -XX:TieredStopAtLevel=1 halves the CPU time of a start, but compiles
nothing with C2: a 30-million-row aggregate ran slower with it in 2 of 3 paired runs
(median 23 s against 17 s), and a long-running service would pay that for good. Given to
every driver of the test suite (through Spark's SPARK_SUBMIT_OPTS), it took `make test` from 42
to 53 minutes: the kill tests' short processes gained (chaos 150 -> 129 s), but the suite's one
long-lived in-process session lost more (ten thousand files 122 -> 218 s). So the suite gives it
only to the short processes of tests/processes/ (tests/processes/conftest.py). Serial or
Parallel GC, -XX:-UsePerfData, dropping the Kafka/PostgreSQL/Unity Catalog jars from spark.jars,
Hive settings (schema verification, direct SQL, connection pooling off): no difference beyond noise.
Nor did starting a throwaway Hive client (and the SQL parser) on a thread of its own while the
session is built, so that the first catalog query finds the metastore's one-time work done: alone
it took a session and its first `show databases` from 5.1 to 4.7 s, but in a no-op `dbt run` the
time from the adapter's start to its first answer stayed 4.9 s. A JVM's start already keeps both
cores busy (its JIT compiles on the other one), so there is no idle core to move work to.

The archive is made once, after the jars are fetched, by `build_class_data_archive` (the
repository's set-up calls it): a short run (session start, `show tables`, a small Delta table
and a streaming query with availableNow) with `-XX:ArchiveClassesAtExit`. A JVM can only use an
archive made with the same class path and the same Java, so the archive's file name is a key
of both (`archive_key`): with other jars, another pyspark or another Java the session finds no
archive of that name and starts as before, until `build_class_data_archive` makes one.
`-Xshare:auto` (the default, written out) makes a missing or unreadable archive a no-op,
never an error.

Java 25's ahead-of-time cache (JEP 514, `-XX:AOTCacheOutput` then `-XX:AOTCache`) was measured
against this archive on Java 25, the same fresh-process work (session, `show tables`, a 20k-row
Delta table, a streaming aggregate of it), three rounds on a quiet 2-core machine, medians:
archive 14.2 s, cache 13.9 s, neither 18.2 s. The 2% is within the rounds' spread (and the cache
was trained on that very work), so the archive stays, the one way for Java 17, 21 and 25.

SPARK_CLASS_DATA_SHARING=off: sessions start without the archive and `jars` makes none.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

from dbt_spark_streaming.classpath import JARS_DIR, PYSPARK_JARS, class_paths
from dbt_spark_streaming.java_runtime import choose_java

SHARING_VARIABLE = "SPARK_CLASS_DATA_SHARING"  # "off" (or 0/false/no): no archive; default on
# Beside the jars: fetching them again replaces the folder, archive included.
ARCHIVE_DIR = JARS_DIR / ".class-data"
BUILD_LOG = ARCHIVE_DIR / "build.log"
BUILD_TIMEOUT_SECONDS = 600

# The class-data archive's own log lines (one per class it skips while archiving, a warning if a
# JVM cannot use it) would land in dbt's output: off. Using the archive or not changes nothing
# else, so there is nothing in them for a user to act on.
_QUIET = "-Xlog:cds=off,cds+dynamic=off"

# The run that makes the archive: every class it loads is in the archive. Run as
# `python -c` in a process of its own, with the archive's path as its argument.
_WORKLOAD = """
import sys
from dbt_spark_streaming import session
from dbt_spark_streaming.lakehouse import Lakehouse

lakehouse = Lakehouse.from_env()
options = session.session_conf(lakehouse, session.DEFAULT_MASTER)["spark.driver.extraJavaOptions"]
spark = session.get_or_create_session(extra_conf={
    "spark.driver.extraJavaOptions": f"{options} -XX:ArchiveClassesAtExit={sys.argv[1]}",
})
spark.sql("show tables").collect()
root = lakehouse.root
spark.range(100).selectExpr("id", "id % 7 as k").write.format("delta").saveAsTable("archive_run")
spark.range(100).selectExpr("id", "cast(id as string) as s").write.json(f"{root}/landing/json")
files = spark.readStream.name("files").schema("id long, s string").json(f"{root}/landing/json")
counts = spark.readStream.name("archive_run").table("archive_run").groupBy("k").count()
for name, stream, mode in (("files", files, "append"), ("counts", counts, "complete")):
    (stream.writeStream.format("delta").outputMode(mode).trigger(availableNow=True)
     .option("checkpointLocation", f"{root}/checkpoints/{name}").toTable(f"archive_{name}")
     .awaitTermination())
spark.sql("select count(*) from archive_counts").collect()
jvm = spark.sparkContext._gateway.proc
spark.stop()
jvm.stdin.close()  # the JVM exits on its input's end, and writes the archive as it exits
sys.exit(jvm.wait())
"""


def sharing_on(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get(SHARING_VARIABLE, "on").strip().lower() not in ("off", "0", "false", "no")


def java_options(
    spark_jars: Sequence[str],
    extra_class_path: Optional[str] = None,
    environ: Mapping[str, str] = os.environ,
) -> list[str]:
    """The options for spark.driver.extraJavaOptions: the archive, when one was made for this
    class path and this Java, and sharing is not turned off."""
    if not sharing_on(environ):
        return []
    archive = archive_path(spark_jars, extra_class_path, environ)
    return class_data_options(archive, archive.is_file())


def class_data_options(archive: Path, exists: bool) -> list[str]:
    if not exists:
        return []
    return [f"-XX:SharedArchiveFile={archive}", "-Xshare:auto", _QUIET]


def archive_path(
    spark_jars: Sequence[str],
    extra_class_path: Optional[str] = None,
    environ: Mapping[str, str] = os.environ,
) -> Path:
    class_path = [
        *(extra_class_path.split(os.pathsep) if extra_class_path else []),
        *_spark_class_path(environ),
        *spark_jars,
    ]
    return ARCHIVE_DIR / f"{archive_key(java_identity(environ), map(_stamp, class_path))}.jsa"


def archive_key(java: str, class_path: Iterable[tuple[str, int, int]]) -> str:
    """The archive's name: one for each Java and each class path (its files, sizes and times)."""
    digest = hashlib.sha256(java.encode())
    for path, size, mtime_ns in class_path:
        digest.update(f"\n{path}\t{size}\t{mtime_ns}".encode())
    return digest.hexdigest()[:20]


def java_identity(environ: Mapping[str, str] = os.environ) -> str:
    """The Java spark-submit runs (JAVA_HOME's, else the PATH's), without starting it: its path,
    its `release` file and its JVM library's size and time."""
    home = environ.get("JAVA_HOME")
    java = Path(home, "bin", "java") if home else shutil.which("java", path=environ.get("PATH"))
    if not java:
        return "no java"
    home_dir = Path(java).resolve().parent.parent
    release = home_dir / "release"
    lib = home_dir / "lib" / "server" / "libjvm.so"
    parts = [str(home_dir), release.read_text(errors="replace") if release.is_file() else ""]
    return "\n".join([*parts, repr(_stamp(str(lib)))])


def _spark_class_path(environ: Mapping[str, str]) -> list[str]:
    """What the launcher puts on the JVM's class path: Spark's conf folder and its jars."""
    home = environ.get("SPARK_HOME")
    jars = Path(home, "jars") if home else PYSPARK_JARS
    conf = environ.get("SPARK_CONF_DIR") or str(jars.parent / "conf")
    return [conf, *sorted(str(jar) for jar in jars.glob("*.jar"))]


def _stamp(path: str) -> tuple[str, int, int]:
    try:
        stat = os.stat(path)
    except OSError:
        return (path, -1, -1)
    return (path, stat.st_size, stat.st_mtime_ns)


def build_class_data_archive(environ: Mapping[str, str] = os.environ) -> Optional[Path]:
    """Make the archive for the current jars and Java, unless it exists or sharing is off.

    Never raises: on failure it prints one line and sessions start without an archive."""
    if not sharing_on(environ):
        return None
    try:
        # The Java sessions will start on (java_runtime.py): the archive is made for it.
        environ = {**environ, "JAVA_HOME": str(choose_java(environ).home)}
        spark_jars, driver_class_path = class_paths("local")  # the embedded default's, as the workload runs
        target = archive_path(spark_jars, os.pathsep.join(driver_class_path), environ)
        if target.is_file():
            return target
        ARCHIVE_DIR.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.stem}.{os.getpid()}.partial")
        try:
            with tempfile.TemporaryDirectory(prefix="class-data-") as scratch:
                _run_workload(partial, scratch, environ)
            if not partial.is_file():
                raise RuntimeError("the JVM wrote no archive")
            os.replace(partial, target)  # whole or not at all, for sessions starting meanwhile
        finally:
            partial.unlink(missing_ok=True)
        for old in ARCHIVE_DIR.glob("*.jsa"):  # made for other jars or another Java
            if old != target:
                old.unlink(missing_ok=True)
        return target
    except Exception as error:  # noqa: BLE001 - the archive only saves time; set-up goes on
        print(f"Class-data archive not made ({error}); Spark sessions start without it "
              f"(details in {BUILD_LOG}).", file=sys.stderr)
        return None


def _run_workload(archive: Path, scratch: str, environ: Mapping[str, str]) -> None:
    # A lakehouse of its own with embedded Derby: the class path the archive is made for.
    env = {key: value for key, value in environ.items()
           if not key.startswith("LAKEHOUSE_") and key not in ("SPARK_MASTER",)}
    env.update({"LAKEHOUSE_DIR": scratch, SHARING_VARIABLE: "off"})
    with open(BUILD_LOG, "w") as log:
        result = subprocess.run(
            [sys.executable, "-c", _WORKLOAD, str(archive)], cwd=scratch, env=env,
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            timeout=BUILD_TIMEOUT_SECONDS,
        )
    if result.returncode != 0:
        raise RuntimeError(f"the archive's run exited with {result.returncode}")
