"""Python side of the streaming lakehouse: the Spark session, streaming sources and writes.

dbt macros reach this package through the `spark_streaming` adapter plugin (adapter/); tests and
the demo call it directly.
"""
