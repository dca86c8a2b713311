"""An in-memory streaming input (Spark's MemoryStream): a unit test's scenario feeds its given
rows through one, a batch at a time (unit_tests/model_tests.py)."""

from __future__ import annotations

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql.types import StructType


class MemoryFeed:
    """An in-memory streaming input (Spark's MemoryStream) of rows with `schema`."""

    def __init__(self, spark: SparkSession, schema: StructType):
        jvm = spark._jvm
        self._spark = spark
        self._schema = schema
        encoder = jvm.org.apache.spark.sql.Encoders.row(spark._jsparkSession.parseDataType(schema.json()))
        self._stream = jvm.org.apache.spark.sql.execution.streaming.runtime.MemoryStream.apply(
            encoder, spark._jsparkSession
        )
        self.frame = DataFrame(self._stream.toDF(), spark)

    def add(self, rows: list[Row]) -> None:
        if not rows:
            return
        values = [tuple(row[field.name] for field in self._schema) for row in rows]
        java_rows = self._spark.createDataFrame(values, self._schema)._jdf.collectAsList()
        converters = self._spark._jvm.scala.jdk.javaapi.CollectionConverters
        self._stream.addData(converters.asScala(java_rows).toSeq())
