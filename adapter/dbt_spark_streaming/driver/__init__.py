"""A warm driver per lakehouse: one running JVM that dbt commands attach to instead of starting
their own. The process that hosts it (the service, or `dbt-spark-streaming driver start`) runs
host.py; a command finds it through its file (driver_file.py) and attaches (attach.py).

May import: config
"""
