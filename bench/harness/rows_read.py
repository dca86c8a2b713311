"""Rows a streaming query run's Spark jobs read from data files, from Spark's status store.

At the benchmark's sizes a batch's time is mostly fixed costs and moves with the machine's load;
the rows read do not, and show how much of its target a MERGE scanned: the new source rows plus,
for update mode, the target files the MERGE could not skip (read once to find the matches, once
more to rewrite or mark the touched files).
"""

from __future__ import annotations

from typing import Optional

from py4j.protocol import Py4JError
from pyspark.sql import SparkSession


def rows_read_by_run(spark: SparkSession, run_id: str) -> Optional[int]:
    """Input records of every stage of the jobs in the run's job group (Spark runs a query's
    micro-batches, foreachBatch included, under its run id); None if the store cannot tell."""
    try:
        store = spark.sparkContext._jsc.sc().statusStore()
        jobs = store.jobsList(None)
        total = 0
        for index in range(jobs.size()):
            job = jobs.apply(index)
            if not job.jobGroup().isDefined() or job.jobGroup().get() != run_id:
                continue
            stage_ids = job.stageIds()
            for stage_index in range(stage_ids.size()):
                attempts = store.stageData(stage_ids.apply(stage_index), False, None, False, None)
                total += sum(attempts.apply(i).inputRecords() for i in range(attempts.size()))
        return total
    except Py4JError:  # the status store's Scala API changed
        return None
