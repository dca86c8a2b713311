"""JVM classes by name, looked up once per JVM.

`spark._jvm.org.apache.hadoop.fs.Path` asks the JVM, through Py4J, about each dotted part in turn
(is `org` a package? `org.apache`? ...): six round trips before the call itself. Functions called
for every model of every run (a table's Delta log, a file's path) look their classes up here.
"""

from __future__ import annotations

import threading
from typing import Any

from pyspark.sql import SparkSession

_found: dict[tuple[int, str], Any] = {}
_lock = threading.Lock()


def jvm_class(spark: SparkSession, name: str) -> Any:
    """The JVM class (or Scala object) `name`, e.g. "org.apache.hadoop.fs.Path"."""
    gateway = spark.sparkContext._gateway
    key = (id(gateway), name)
    found = _found.get(key)
    if found is None:
        found = spark.sparkContext._jvm
        for part in name.split("."):
            found = getattr(found, part)
        with _lock:
            _found[key] = found
    return found
