"""A Spark session's runtime settings over a dict, for unit tests of code that reads and sets
them without a JVM: the three calls of `spark.conf` that code uses."""

from __future__ import annotations


class DictConf:
    def __init__(self, values: dict[str, str] | None = None):
        self.values = dict(values or {})

    def get(self, key, default=None):
        return self.values.get(key, default)

    def set(self, key, value):
        self.values[key] = value

    def unset(self, key):
        self.values.pop(key, None)
