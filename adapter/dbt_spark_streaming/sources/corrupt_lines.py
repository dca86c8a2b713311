"""Lines a model cannot read: kept out of its rows, their raw text kept beside its table.

A json or csv source read in PERMISSIVE mode has a corrupt-record column (`_corrupt_record`): a
line that is not valid JSON, or that has a value of the wrong type, keeps its raw text there
and its columns are null. A model that selects that column (or names it in its SQL, say to
filter on it) sees such lines and handles them. A model that does not would write them as rows
of nulls (`{bad json` as a row with every column null, `"v": "abc"` as a row whose v is null),
with the raw text in no table. So for such a model, when its query is created:

- it reads each of those sources through a view of the lines that could be read
  (`<source view>__readable`: `where _corrupt_record is null`), and
- the other lines are streamed, by a query of their own per source with a checkpoint of its own
  (writes/corrupt_lines.py, run with the model's), into `<model table>__corrupt_lines`: the raw
  text, the source, the file and when; the model's run line counts them.

Which lines are unreadable depends on the columns read: Spark parses only the columns a query
needs, so `"v": "abc"` is unreadable to a query that reads v and a fine line to one that does
not. The quarantine therefore reads the columns of the source the model reads (found in its
optimized plan, plus its watermark columns): a line leaves the model's rows exactly when it goes
to the quarantine. A model that reads no column of a source (`count(*)`, only `_metadata`) reads
no nulls from it and is left as it is (Spark refuses a query over such files that needs only the
corrupt-record column).

A source with `archive_to` has its files moved away by the model's stream once it has read them,
so the quarantine reads them there, in the archive, rather than race the model for them in the
landing folder: a file's unreadable lines are quarantined at the model's next batch. A source
with `delete_processed` has no such place: its files are gone once the model read them, so a
model that would need the quarantine is refused, naming the fixes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Optional

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from dbt_spark_streaming.config.sources import StreamSourceConfigError
from dbt_spark_streaming.config.stream_reads import RESET_VIEW_SUFFIX
from dbt_spark_streaming.jvm import hadoop_fs, plans
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.sources.views import SourceViews, StreamSource, source_frame

TABLE_SUFFIX = "__corrupt_lines"
READABLE_SUFFIX = "__readable"
METADATA = "_metadata"
# The quarantine table's columns.
SOURCE_COLUMN = "_source"
RAW_COLUMN = "_corrupt_record"
FIELDS_COLUMN = "_fields_read"
FILE_COLUMN = "_source_file"
MODIFIED_COLUMN = "_file_modification_time"
QUARANTINED_AT_COLUMN = "_quarantined_at"


@dataclass(frozen=True)
class CorruptLines:
    """A source whose unreadable lines a model does not see: they go to its quarantine."""

    source: str  # "<source>.<table>"
    view: str  # the temp view the model's SQL reads the source through (all lines)
    corrupt_column: str
    columns: tuple[str, ...]  # the source's columns the model reads; the quarantine reads them too
    archived: Optional[StreamSource] = None  # with archive_to: its files once the model moved them

    def frame(self, spark: SparkSession) -> DataFrame:
        """The source's lines that could not be read, as the quarantine table keeps them. Spark
        refuses a query over json/csv files that reads only the corrupt-record column: the
        columns read go along, as JSON (`_fields_read`: what could be read of the line)."""
        read = (spark.table(self.view) if self.archived is None
                else source_frame(spark, self.archived, Lakehouse.from_env()))
        lines = read.where(F.col(_quoted(self.corrupt_column)).isNotNull())
        return lines.select(
            F.lit(self.source).alias(SOURCE_COLUMN),
            F.col(_quoted(self.corrupt_column)).alias(RAW_COLUMN),
            F.to_json(F.struct(*[F.col(_quoted(column)) for column in self.columns])).alias(FIELDS_COLUMN),
            F.col(f"{METADATA}.file_path").alias(FILE_COLUMN),
            F.col(f"{METADATA}.file_modification_time").alias(MODIFIED_COLUMN),
            F.current_timestamp().alias(QUARANTINED_AT_COLUMN),
        )


def table_of(model_table: str) -> str:
    """The quarantine of a model's unreadable lines, beside its table."""
    return f"{model_table}{TABLE_SUFFIX}"


def checkpoint_of(model_checkpoint: str) -> str:
    """The folder of the checkpoints of a model's corrupt-lines queries (one per source below it)."""
    return f"{model_checkpoint.rstrip('/')}{TABLE_SUFFIX}"


def keep_out_of_model(
    spark: SparkSession, config, sql: str, source_views: SourceViews
) -> tuple[str, tuple[CorruptLines, ...]]:
    """The model's SQL reading, from each PERMISSIVE json/csv source whose corrupt-record column
    it does not use, only the lines that could be read; and those sources, for the quarantine.

    `config`: the model's ModelConfig (its watermarks); `source_views`: the run's meta.stream
    sources, by the views that read them (an ephemeral model's source() is in the SQL too).
    Costs nothing for a model that reads no such source or names their column (a bronze model
    keeping `_corrupt_record`); otherwise one more analysis of the query. A query that does not
    resolve is left as it is, for the model's own check to report.
    """
    wanted = []
    for source_view, source in source_views.streaming_sources().items():
        column = source.corrupt_record_column
        if column and not names_column(sql, column):
            views = _views_of(sql, source_view)
            if views:
                wanted.append((source, column, views))
    if not wanted:
        return sql, ()
    try:
        frame = spark.sql(sql)
        output = {column.lower() for column in frame.columns}
        plan = plans.optimized(spark, frame)
    except (PySparkException, Py4JJavaError):
        return sql, ()
    watermarked = {watermark.column.lower() for watermark in config.watermarks}
    found = []
    for source, column, views in wanted:
        if column.lower() in output:  # `select *`: the model carries the raw text itself
            continue
        for view in views:
            columns = _columns_read(spark, plan, source, view, column, watermarked)
            if not columns:
                continue  # reads no column of the source: no nulls to keep out
            if source.delete_processed:
                raise _deleted_before_quarantined(config, source, column)
            readable = f"{view}{READABLE_SUFFIX}"
            spark.table(view).where(F.col(_quoted(column)).isNull()).createOrReplaceTempView(readable)
            sql = _renamed(sql, view, readable)
            archived = _archived(spark, source) if source.archive_to else None
            found.append(CorruptLines(source.name, view, column, columns, archived))
    return sql, tuple(found)


def _deleted_before_quarantined(config, source: StreamSource, column: str) -> StreamSourceConfigError:
    """The quarantine would be a second reader of a folder the model's stream deletes from: it
    would miss the files deleted before it read them, and their unreadable lines with them."""
    return StreamSourceConfigError(
        f"Source {source.name}: meta.stream.delete_processed is set and model {config.model} does "
        f"not select its {column} column, so its unreadable lines would be quarantined by a second "
        "reader of the folder, which would miss the files the model deletes. Select "
        f"{column} in the model (and split those lines off downstream), use "
        "meta.stream.archive_to: <folder> instead (the quarantine then reads the archive), or set "
        "options.mode: DROPMALFORMED or FAILFAST."
    )


def _archived(spark: SparkSession, source: StreamSource) -> StreamSource:
    """The source as its files are once the model's stream has archived them (Spark keeps each
    file's path below the archive folder). The quarantine reads those: a second reader of the
    landing folder would miss the files the model moves away before it reads them. So a file's
    unreadable lines are quarantined once the model has archived it, at its next batch."""
    lakehouse = Lakehouse.from_env()
    below = hadoop_fs.uri_path(spark, lakehouse.landing_path(source.path))
    folder = f"{lakehouse.landing_path(source.archive_to).rstrip('/')}/{below.strip('/')}"
    return replace(source, path=folder, archive_to=None, create_path=True, schema_evolution="none")


def names_column(sql: str, column: str) -> bool:
    """The SQL names the column (selects it, filters on it), other than to leave it out
    (`* except (_corrupt_record)`)."""
    kept = re.sub(r"\bexcept\s*\([^)]*\)", " ", sql, flags=re.I)
    return re.search(r"(?<![\w$])" + re.escape(column) + r"(?![\w$])", kept, re.I) is not None


def _views_of(sql: str, view: str) -> list[str]:
    """The names the SQL reads a source's stream through: its view, or the view a pending
    checkpoint reset gave this model (config/stream_reads.py's reset_view_name)."""
    pattern = r"(?<![\w$])(" + re.escape(view) + r"(?:" + RESET_VIEW_SUFFIX + r"\w+)?)(?![\w$])"
    return list(dict.fromkeys(match.lower() for match in re.findall(pattern, sql, re.I)))


def _renamed(sql: str, view: str, new: str) -> str:
    return re.sub(r"(?<![\w$])" + re.escape(view) + r"(?![\w$])", new, sql, flags=re.I)


def _columns_read(spark: SparkSession, plan, source, view: str, corrupt: str, watermarked: set[str]) -> tuple[str, ...]:
    """The source's data columns the model's optimized plan reads (those of its watermarks too),
    in the source's order. Json with a rescued-data column is read as text and parsed by the
    query itself: every column then. A plan whose file scan of the source is not found: every
    column too (more lines quarantined than left out, never fewer)."""
    data = [column for column in spark.table(view).columns if column.lower() not in (corrupt.lower(), METADATA)]
    if source.rescued_data_column:
        return tuple(data)
    read = plans.columns_read_from_files(plan, Lakehouse.from_env().landing_path(source.path).rstrip("/"))
    if read is None:
        return tuple(data)
    return tuple(column for column in data if column.lower() in read or column.lower() in watermarked)


def _quoted(column: str) -> str:
    return "`" + column.replace("`", "``") + "`"

