"""The one Spark session of a process: Delta Lake enabled, tables kept in a Hive metastore.

The metastore is embedded Derby under the lakehouse unless a shared one is configured
(`metastore_url` in the profile or LAKEHOUSE_METASTORE_URL, see metastore.py). With Derby the
process takes the lakehouse's run lock as it starts (Derby admits one process); with a shared
metastore any number of processes may open sessions, and only one that starts a stream takes
the lock (writes/streaming.py), so two runs still never write the same checkpoints.

dbt-spark's session method runs every statement through `SparkSession.builder.getOrCreate()`, so
building the session here first, before dbt asks for it, is what gives dbt a Delta-enabled
session. Static settings only apply to the first build in a process.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Mapping, Optional

from pyspark.logger import PySparkLogger
from pyspark.sql import SparkSession

from dbt_spark_streaming import run_lock
from dbt_spark_streaming import classpath
from dbt_spark_streaming.classpath import class_paths, uses_s3a
from dbt_spark_streaming.java_runtime import use_chosen_java
from dbt_spark_streaming.jvm.checkpoint_log import OFFSET_LOG_VERSION, SOURCE_NAMING
from dbt_spark_streaming.jvm_options import java_options
from dbt_spark_streaming.lakehouse import Lakehouse, on_local_disk
from dbt_spark_streaming.metastore import (
    METASTORE_PASSWORD_KEY, METASTORE_URL_KEY, METASTORE_USER_KEY, configured_url, derby_java_options,
    driver_jars, metastore_conf,
)
from dbt_spark_streaming.jvm.table_writers import TableWriters
from dbt_spark_streaming.config.maintenance import SMALL_FILE_BYTES
from dbt_spark_streaming.driver import attach
from dbt_spark_streaming.driver.driver_file import DriverRecord
from dbt_spark_streaming.errors import StreamingModelError

DEFAULT_MASTER = "local[*]"
# A JVM idle this long since its last collection collects, and gives back what it does not use.
IDLE_COLLECTION_MS = 15_000
LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")

# Not SparkSession.getActiveSession(): that is per thread, and dbt runs models in worker threads.
# Building again through the builder would re-apply settings to the running session.
_session: Optional[SparkSession] = None
_lakehouse: Optional[Lakehouse] = None
# The warm driver this process's session runs on (driver/attach.py), if it attached to one.
_attached: Optional[DriverRecord] = None
# The settings this process's JVM started with, when it started one (a warm driver publishes them).
_conf: dict[str, str] = {}
# How long building the session (starting the JVM) took in this process; benchmarks report it apart.
startup_seconds: Optional[float] = None
# One build at a time: a build started in the background (start_in_background) and dbt's first
# statement, or several dbt threads, all end up with the one session.
_building = threading.RLock()
_jvm_session_class = None


def session_conf(lakehouse: Lakehouse, master: str, metastore_url: Optional[str] = None) -> dict[str, str]:
    metastore = lakehouse.metastore
    catalog = metastore_conf(metastore, metastore_url)
    jars, driver_class_path = class_paths(master, driver_jars(metastore_url), s3a=uses_s3a(lakehouse.locations()))
    # No jars yet on this machine: Spark fetches Delta's as it starts (classpath.py).
    fetch = {} if classpath.jar_paths() else classpath.resolution_conf()
    shuffle_partitions = os.environ.get("SPARK_SHUFFLE_PARTITIONS", "4")
    return {
        "spark.master": master,
        "spark.app.name": "streaming-lakehouse",
        **fetch,
        **({"spark.jars": ",".join(jars)} if jars else {}),
        **({"spark.driver.extraClassPath": os.pathsep.join(driver_class_path)} if driver_class_path else {}),
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": lakehouse.warehouse,
        **catalog,
        "spark.driver.extraJavaOptions": " ".join([
            # The class-data archive, when build_class_data_archive made one (jvm_options.py).
            *java_options(jars, os.pathsep.join(driver_class_path)),
            *derby_java_options(metastore, metastore_url),
            f"-Dlog4j2.configurationFile={LOG4J_CONFIG}",
            f"-Dlakehouse.spark.log={spark_log_path(lakehouse)}",
            # Outside UTC, Delta rebuilds a table's whole state to verify every commit's checksum.
            "-Duser.timezone=UTC",
            # G1 gives memory back after a collection when more than this share of the heap is
            # free: without, an always-on service's heap grew towards spark.driver.memory (2.9 ->
            # 4.0 GB over the 60-minute soak) though what it kept alive stayed under 200 MB.
            "-XX:MaxHeapFreeRatio=30", "-XX:MinHeapFreeRatio=10",
            # ...and when it has been idle this long with no collection: a warm driver between
            # commands, a service between waves (JEP 346). A full collection: a concurrent cycle
            # leaves the garbage of the old regions in place until young collections follow,
            # which an idle JVM does not run (a warm driver after 200 runs: 1.0 GB resident with
            # it, 0.74 GB after a full one).
            f"-XX:G1PeriodicGCInterval={IDLE_COLLECTION_MS}", "-XX:-G1PeriodicGCInvokesConcurrent",
        ]),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": shuffle_partitions,
        # Local mode runs everything in the driver; Spark's 1g runs out on an aggregate's state
        # at a million keys (measured: update_vs_complete at 1M). Read when the JVM starts.
        "spark.driver.memory": os.environ.get("SPARK_DRIVER_MEMORY", "4g"),
        "spark.sql.session.timeZone": "UTC",
        # Delta rebuilds table state with 50 tasks by default: seconds of overhead per commit on a laptop.
        "spark.databricks.delta.snapshotPartitions": os.environ.get("DELTA_SNAPSHOT_PARTITIONS", "2"),
        # Spark writes every query's plan out for its UI, which is off here: the short form.
        "spark.sql.ui.explainMode": "simple",
        # With pushdown, a json/csv line a model's WHERE rejects is dropped while it is parsed,
        # before the scan counts it: a run's "rows in" (numInputRows) would be fewer than the
        # lines that landed, with no way to tell why. Off, every line read is counted; it costs
        # scan time only when a filter rejects most lines (bench/file_pushdown/,
        # docs/BENCHMARKS.md section 11).
        "spark.sql.json.filterPushdown.enabled": "false",
        "spark.sql.csv.filterPushdown.enabled": "false",
        # With column pruning, Spark's csv parser splits out only the columns a query reads and
        # checks their count, not the line's: a line with a field too many (or too few) becomes
        # a normal row of a model that names some of the columns, its extra value dropped
        # unseen. Off, every line is checked against the whole schema; values are still
        # converted only for the columns read.
        "spark.sql.csv.parser.columnPruning.enabled": "false",
        # Delta refuses time travel (a rollback's RESTORE, a change feed read from a version)
        # to versions older than the table's file retention, which is short here so that the
        # log's checkpoints stay small (config/maintenance.py). The maintenance's VACUUM keeps the
        # files those still need (lifecycle/maintenance.py); a version whose files another VACUUM
        # removed fails with Delta's file-not-found error instead.
        "spark.databricks.delta.vacuum.enforceTimeTravelWithinDeletedFileRetentionDuration": "false",
        # VACUUM's RETAIN counts (Delta 4 otherwise takes the table's file retention instead):
        # the guards' retention is longer than that, by design.
        "spark.databricks.delta.vacuum.retentionWindowIgnore.enabled": "false",
        # OPTIMIZE rewrites files under this size (Delta's default: 1 GB, so a streaming table's
        # one compacted file would be rewritten at every compaction, its cost growing with the
        # table); lifecycle/maintenance.py counts the files under it (config/maintenance.py).
        "spark.databricks.delta.optimize.minFileSize": str(SMALL_FILE_BYTES),
        # VACUUM lists a table's folder as a job of this many tasks (Spark's default: 10,000,
        # nearly all empty): 63 s a VACUUM of a 30-file table on 2 busy cores, against 6 s at 4
        # (the soak's stall after its first maintenance round; docs/BENCHMARKS.md section 7).
        "spark.sql.sources.parallelPartitionDiscovery.parallelism": shuffle_partitions,
        # Every streaming source has a name (config/stream_reads.py), by which a new checkpoint
        # keys its offsets (Spark's offset log version 2): a model can gain or lose an input and
        # keep the others' progress (docs/changing-models.md). A checkpoint from before names is
        # converted when its query next starts (lifecycle/checkpoint_names.py).
        SOURCE_NAMING: "true",
        OFFSET_LOG_VERSION: "2",
        # Spark 4.2 checks, at every restart whose last batch was not committed (a run killed
        # mid-batch), whether that batch was an offline state repartition, which this project
        # never runs: the check reads the shuffle partitions its named entries do not record, and
        # fails with `None.get` (jvm/checkpoint_log.py's record_shuffle_partitions records them
        # for models' checkpoints; this covers any other query of the session).
        "spark.sql.streaming.checkUnfinishedRepartitionOnRestart": "false",
        # A query started on a checkpoint that another query of the JVM runs is refused (Spark's
        # default stops the running one): with commands attached to a warm driver (driver/), the
        # other may be the service's.
        "spark.sql.streaming.stopActiveRunOnRestart": "false",
        # Spark keeps the last 1,000 jobs, stages and SQL executions (each with its plan) for its
        # UI even with the UI off: an always-on service's memory would grow until it held them
        # all. Nothing here reads them.
        **{key: "50" for key in ("spark.ui.retainedJobs", "spark.ui.retainedStages",
                                 "spark.sql.ui.retainedExecutions")},
        # Spark caches the files of every file-source listing (a landing folder at each
        # streaming view's start, to infer partitions) under a key of that listing's own, which
        # no later listing reads again, up to 250 MB: a warm driver's memory grew by the landing
        # folder's listing at every attached run. It serves Hive-partitioned catalog tables,
        # which this project does not write.
        "spark.sql.hive.filesourcePartitionFileCacheSize": "0",
        **checkpoint_file_manager(lakehouse.checkpoints),
        # S3A buffers an upload in a local file through Hadoop's checksummed local file system,
        # which these settings replace: with any location on s3a://, Hadoop's defaults stay.
        **({} if uses_s3a(lakehouse.locations()) else LOCAL_FILES),
        **loopback_driver(master),
    }


def loopback_driver(master: str) -> dict[str, str]:
    """A local master's driver listens on loopback only: Spark's default binds its RPC and block
    manager ports to the machine's network address, open to the network for a driver that no
    other machine needs to reach. A cluster's workers reach theirs as Spark decides."""
    if not master.startswith("local"):
        return {}
    return {"spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1"}


# Spark writes a checkpoint file (offsets, commits, state) under a temporary name, then renames it
# through Hadoop's FileContext. On the local file system that rename runs `readlink` as a process
# for the source and for the target, and again for each one's checksum file: about 20 processes
# a served batch, 70% of all the JVM started (a profile of the soak; docs/BENCHMARKS.md section
# 7). Through Hadoop's FileSystem the rename is Java's own. Locally the two are equally atomic
# (both check the target, then rename); HDFS and object stores keep Spark's choice.
_LOCAL_CHECKPOINT_FILE_MANAGER = \
    "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager"


def checkpoint_file_manager(checkpoints: str) -> dict[str, str]:
    """The checkpoint file manager for the lakehouse's checkpoint root: {} to keep Spark's."""
    if not on_local_disk(checkpoints):
        return {}
    return {"spark.sql.streaming.checkpointFileManagerClass": _LOCAL_CHECKPOINT_FILE_MANAGER}


# Local files (`file:` paths only; object stores and HDFS keep Spark's and Delta's choices):
# - without Hadoop's checksum files. Its local file system writes a hidden `.crc` beside every
#   file and lists it with it: each Delta commit was four files in `_delta_log` instead of two,
#   and every snapshot update lists that folder (a 250-commit log: 11.2 ms a listing with
#   them, 4.3 ms without; docs/BENCHMARKS.md section 7). Parquet and Delta keep checksums of
#   their own; HDFS and object stores never had these.
# - Delta's commits renamed through Hadoop's FileSystem, not FileContext, which starts
#   `readlink` processes at every rename (as for checkpoints above): 36 processes a Delta
#   append, 10 without both changes. Its local log store checks the target and renames under a
#   lock of the JVM, as atomic as FileContext's local rename (also check, then rename); one
#   writer per table across processes is the run lock's job (run_lock.py).
LOCAL_FILES = {
    "spark.hadoop.fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
    "spark.hadoop.fs.AbstractFileSystem.file.impl": "org.apache.hadoop.fs.local.RawLocalFs",
    "spark.delta.logStore.file.impl": "io.delta.storage.LocalLogStore",
}


def spark_log_path(lakehouse: Lakehouse) -> str:
    """Spark's own log (its Java stack traces): in this machine's folder of the lakehouse."""
    return str(Path(lakehouse.local) / "logs" / "spark.log")


def get_or_create_session(
    lakehouse: Optional[Lakehouse] = None,
    master: Optional[str] = None,
    extra_conf: Optional[Mapping[str, str]] = None,
    metastore_url: Optional[str] = None,
) -> SparkSession:
    with _building:
        if _session is None or _session.sparkContext._jsc.sc().isStopped():
            _build(lakehouse, master, extra_conf, metastore_url)
        _make_active_in_this_thread(_session)
        return _session


def start_in_background(
    master: Optional[str] = None,
    extra_conf: Optional[Mapping[str, str]] = None,
    metastore_url: Optional[str] = None,
    then: Callable[[], None] = lambda: None,
) -> None:
    """Start building the session on a thread of its own, so that the JVM starts while the
    caller goes on (dbt parses the project); the first get_or_create_session waits for it.
    `then`: more to do on that thread once the session is up (while the caller's first query
    waits for the metastore client to start).

    A build that fails here is left for that call to repeat, which raises the error to its caller.
    """
    if _session is not None:
        return

    def build() -> None:
        try:
            get_or_create_session(master=master, extra_conf=extra_conf, metastore_url=metastore_url)
            then()
        except Exception:  # noqa: BLE001 - reported by the caller's own build
            pass

    threading.Thread(target=build, name="spark-session-start", daemon=True).start()


def _build(
    lakehouse: Optional[Lakehouse],
    master: Optional[str],
    extra_conf: Optional[Mapping[str, str]],
    metastore_url: Optional[str],
) -> None:
    global _session, _lakehouse, _attached, _conf, startup_seconds
    lakehouse = lakehouse or Lakehouse.from_env()
    metastore_url = configured_url(metastore_url)
    use_chosen_java()  # before the conf: the class-data archive is one per Java
    if uses_s3a(lakehouse.locations()):
        classpath.fetch_s3a_jars()  # once per machine, before the JVM whose class path they join
    master = master or os.environ.get("SPARK_MASTER", DEFAULT_MASTER)
    conf = session_conf(lakehouse, master, metastore_url)
    conf.update(extra_conf or {})
    attached = attach.try_attach(lakehouse.local, conf, note=_say)
    if attached is not None:
        _session, _lakehouse, _attached = attached.session, lakehouse, attached.driver
        startup_seconds = attached.seconds
        _say(f"{attach.ATTACHED_SAID} of {lakehouse.root} ({_driver_said(attached.driver)}) "
             f"in {attached.seconds:.2f} s: no JVM started (DBT_SPARK_STREAMING_ATTACH=0 starts one).")
        _query_errors_to_file(Path(spark_log_path(lakehouse)).with_name("pyspark.log"))
        _java_errors_through_callbacks(_session)
        return
    if not metastore_url:
        take_run_lock(lakehouse)
        if "://" not in lakehouse.metastore:
            os.makedirs(lakehouse.metastore, exist_ok=True)
    appended = classpath.appended_class_path(master, uses_s3a(lakehouse.locations()))
    if appended:  # read by the JVM's launcher, which pyspark starts with this process's variables
        variable = classpath.DIST_CLASS_PATH_VARIABLE
        os.environ[variable] = classpath.dist_class_path_with(os.environ.get(variable), appended)
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    started = time.perf_counter()
    _session = _started(builder.enableHiveSupport(), conf)
    startup_seconds = time.perf_counter() - started
    _conf = dict(conf)
    _session.sparkContext.setLogLevel(os.environ.get("SPARK_LOG_LEVEL", "ERROR"))
    _query_errors_to_file(Path(spark_log_path(lakehouse)).with_name("pyspark.log"))
    _java_errors_through_callbacks(_session)
    _lakehouse = lakehouse


def _started(builder, conf: Mapping[str, str]) -> SparkSession:
    """The session; when it had Spark fetch its jars (the first on this machine), those jars
    kept for the next, or why they could not be fetched."""
    ivy = conf.get("spark.jars.ivy") if "spark.jars.packages" in conf else None
    if ivy is None:
        return builder.getOrCreate()
    try:
        session = builder.getOrCreate()
    except Exception as error:  # the JVM exits before py4j connects; Spark said why on stderr
        raise classpath.resolution_failed(error) from None
    classpath.keep_resolved_jars(ivy)
    return session


def _query_errors_to_file(path: Path) -> None:
    """pyspark logs every SQL error it raises, with the Java stack trace, as a JSON line on
    stderr, before the error reaches us to be explained: keep those lines in a file instead."""
    path.parent.mkdir(parents=True, exist_ok=True)
    loggers = [PySparkLogger.getLogger(name)
               for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger")]
    loggers.append(logging.getLogger("py4j.clientserver"))  # a foreachBatch function's error
    for logger in loggers:
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.addHandler(logging.FileHandler(path, delay=True))
        logger.propagate = False


def _java_errors_through_callbacks(spark: SparkSession) -> None:
    """A foreachBatch function that raises Spark's error hands the JVM that error itself
    (idempotent_batches re-raises it so), not a Python traceback as text: the query then fails
    with the same error a built-in sink would, and streaming_errors explains it the same way.
    py4j can do it but pyspark does not ask; py4j still logs the traceback: to the file too."""
    gateway = spark.sparkContext._gateway
    for parameters in ("python_parameters", "callback_server_parameters"):
        if getattr(gateway, parameters, None) is not None:
            getattr(gateway, parameters).propagate_java_exceptions = True


def active_session() -> Optional[SparkSession]:
    """This process's session if one was built, without building one."""
    return _session


def session_key(spark: SparkSession) -> int:
    """The JVM session behind a Python one: the same for every wrapper of one session."""
    return id(spark._jsparkSession)


@contextmanager
def claim_model(model: str) -> Iterator[bool]:
    """A served run of the model: True while the block runs if no command attached to this
    process's warm driver writes it (run_lock.model_claim)."""
    with run_lock.model_claim((_lakehouse or Lakehouse.from_env()).local, _model_key(model)) as claimed:
        yield claimed


def model_holder(model: str) -> str:
    """Who holds the model's lock: 'process 123 (`dbt run ...`)'."""
    return run_lock.holder_said(run_lock.holder_of_model((_lakehouse or Lakehouse.from_env()).local,
                                                         _model_key(model)))


def _model_key(model: str) -> str:
    """A model's lock is its target's: dev's run of a model does not wait on production's."""
    target = (_lakehouse or Lakehouse.from_env()).target
    return f"{target}.{model}" if target else model


def claim_lakehouse_for(model: str, table: Optional[str] = None) -> None:
    """Before a model writes: the run lock, so no other process writes the same checkpoints;
    attached to a warm driver, whose process holds that lock, the model's own. With a shared
    metastore, also its `table` against every other process that shares it (table_writers.py)."""
    try:
        if _attached is not None:
            root = (_lakehouse or Lakehouse.from_env()).local
            run_lock.hold_model(root, _model_key(model), note=lambda said: _say(f"Model {model}: {said}."))
        else:
            take_run_lock()
    except run_lock.LakehouseBusyError as busy:
        raise StreamingModelError(f"Model {model}: {busy}") from None
    if table:
        claim_table(model, table)


def claim_table(model: str, table: str) -> None:
    """With a shared metastore, this process is `table`'s one writer from now until it exits
    (table_writers.py): taken when a model's run begins, before it knows whether anything is
    new, so that whether a second process may run the model never depends on the data."""
    writers = _table_writers()
    if writers is not None:
        writers.claim(table, model)


@contextmanager
def committing(table: str) -> Iterator[None]:
    """Around a commit to a table other processes append to as well: with a shared metastore,
    one process's commit at a time (table_writers.py)."""
    writers = _table_writers()
    if writers is None:
        yield
        return
    with writers.committing(table):
        yield


_writers: Optional[TableWriters] = None


def _table_writers() -> Optional[TableWriters]:
    """This process's hold on the tables it writes, when its metastore is shared (a JDBC URL)."""
    global _writers
    url = _conf.get(METASTORE_URL_KEY) or (_attached.conf.get(METASTORE_URL_KEY) if _attached else None)
    if _writers is None and url and not url.startswith("jdbc:derby:") and _session is not None:
        conf = _attached.conf if _attached is not None else _conf
        _writers = TableWriters(_session, url, conf.get(METASTORE_USER_KEY), conf.get(METASTORE_PASSWORD_KEY))
        if _attached is not None:  # the connection is in the warm driver's JVM, which outlives this process
            atexit.register(_writers.close)
    return _writers


def claim_model_if_attached(model: str) -> None:
    """Attached to a warm driver, the model's lock before its run looks at its table and
    checkpoint: another attached command may be writing both (claim_lakehouse_for)."""
    if _attached is not None:
        claim_lakehouse_for(model)


def take_run_lock(lakehouse: Optional[Lakehouse] = None) -> None:
    """This process's claim on the lakehouse (a no-op once held); raises LakehouseBusyError."""
    if _attached is not None:
        raise run_lock.LakehouseBusyError(
            f"This needs the lakehouse {_attached.lakehouse} to itself, and the warm driver "
            f"({_driver_said(_attached)}) holds it. "
            + ("The service maintains the tables it serves itself; stop it (`dbt-spark-streaming "
               "stop`) to run this." if _attached.kind == "service" else
               "Stop it (`dbt-spark-streaming driver stop`) and run this again."))
    previous = run_lock.acquire((lakehouse or _lakehouse or Lakehouse.from_env()).local)
    if previous:
        print(
            f"Note: an earlier run (process {previous.get('pid')}, `{previous.get('command')}`) "
            "ended without releasing the lakehouse; its lock was stale and is taken over.",
            file=sys.stderr,
        )


def started_conf() -> dict[str, str]:
    """The settings this process's JVM started with ({} when it attached to a warm driver)."""
    return dict(_conf)


def attached_driver() -> Optional[DriverRecord]:
    """The warm driver this process's session runs on, if it attached to one."""
    return _attached


def _driver_said(driver: DriverRecord) -> str:
    return f"the service, process {driver.pid}" if driver.kind == "service" else f"process {driver.pid}"


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _make_active_in_this_thread(spark: SparkSession) -> None:
    """Each Python thread drives its own JVM thread, whose active session starts unset.

    Delta looks tables up through the JVM thread's active session; without it a streaming write
    started from a dbt worker thread sees a catalog table as a bare path and fails.
    """
    global _jvm_session_class
    if _jvm_session_class is None:  # looked up once: each dotted part is a round trip to the JVM
        _jvm_session_class = spark._jvm.org.apache.spark.sql.SparkSession
    _jvm_session_class.setActiveSession(spark._jsparkSession)
