"""dbt adapter plugin `spark_streaming`: dbt-spark's session method plus streaming writes.

Everything dbt-spark does (tables, views, incremental, seeds, snapshots, tests) is inherited
unchanged; this plugin only adds the Python methods that the `streaming_table` materialisation
calls, because Spark SQL alone cannot start a stream.
"""

from dbt.adapters.base import AdapterPlugin

from dbt.adapters.spark_streaming.connections import (  # noqa: F401
    SparkStreamingConnectionManager,
    SparkStreamingCredentials,
)
from dbt.adapters.spark_streaming.impl import SparkStreamingAdapter
from dbt.include import spark_streaming

Plugin = AdapterPlugin(
    adapter=SparkStreamingAdapter,  # type: ignore[arg-type]
    credentials=SparkStreamingCredentials,
    include_path=spark_streaming.PACKAGE_PATH,
    dependencies=["spark"],
)
