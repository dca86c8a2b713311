"""What one streaming model's run did: the line dbt prints for it and the run's closing summary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from pyspark.sql.streaming import StreamingQuery

from dbt_spark_streaming.config.expectations import ExpectationCounts, expectations_said
from dbt_spark_streaming.lifecycle import query_changes
from dbt_spark_streaming.lifecycle.up_to_date import UpToDate
from dbt_spark_streaming.progress.batch import batches_of
from dbt_spark_streaming.writes import corrupt_lines as corrupt_lines_writes, unreadable_counts


@dataclass(frozen=True)
class StreamSummary:
    model: str
    batches: int
    input_rows: int
    output_rows: int
    seconds: float
    running: bool
    late_rows: int = 0
    expectations: ExpectationCounts = ExpectationCounts()
    query_changed: str = ""  # what changed in the query since the last run, applied to new rows
    waiting_since_reset: bool = False  # a reset checkpoint whose Delta input has no commit after it yet
    redeployed: str = ""  # what a redeploy before the run did
    applied: str = ""  # a cdc_table's: what its MERGEs did (apply_changes.applied_said)
    corrupt_lines: int = 0  # unreadable source lines kept out of the model's rows, quarantined
    corrupt_lines_table: str = ""  # where (writes/corrupt_lines.py)
    unreadable: str = ""  # the unreadable lines that entered its query, said (writes/unreadable_counts.py)
    up_to_date: Optional[UpToDate] = None  # nothing new since its last batch: no query started

    @property
    def code(self) -> str:
        """dbt's status code for the run line (run_results.json's adapter_response)."""
        return "UP TO DATE" if self.up_to_date is not None else "STREAMED"

    def message(self) -> str:
        if self.waiting_since_reset:
            return ("STREAMED 0 rows in, 0 written: no commit in its Delta input since the "
                    "checkpoint was reset yet; the reset's starting point still holds "
                    "(nothing served until a run finds one)")
        changed = query_changes.applied_note(self.query_changed) if self.query_changed else ""
        if self.up_to_date is not None:
            serving = ", serving" if self.running else ""
            return (f"UP TO DATE, 0 rows in: nothing new since batch {self.up_to_date.batch_id}, "
                    f"no query started{serving}{changed}{self.redeployed}")
        state = "caught up, serving" if self.running else "caught up"
        batches = "1 batch" if self.batches == 1 else f"{self.batches} batches"
        late = f", {self.late_rows} late row{'' if self.late_rows == 1 else 's'} dropped"
        late = late if self.late_rows else ""
        return (f"STREAMED {self.input_rows} rows in, {self.output_rows} written{self.applied}{late}"
                f"{expectations_said(self.expectations)}"
                f"{corrupt_lines_writes.said(self.corrupt_lines, self.corrupt_lines_table)}{self.unreadable}"
                f", {batches} ({state}){changed}{self.redeployed}")


def summarise(
    model: str, query: StreamingQuery, written: int, seconds: float, table_columns: Sequence[str] = (),
) -> StreamSummary:
    """What this run did; rows written come from the Delta commits (the sink reports -1);
    `table_columns`: the model's, to say whether the unreadable lines it read are kept."""
    batches = batches_of(query)
    unreadable: dict[str, int] = {}
    for batch in batches:
        for column, rows in batch.unreadable_lines.items():
            unreadable[column] = unreadable.get(column, 0) + rows
    return StreamSummary(
        model=model,
        batches=len(batches),
        input_rows=sum(batch.input_rows for batch in batches),
        output_rows=written,
        seconds=round(seconds, 3),
        running=query.isActive,
        late_rows=sum(batch.late_rows for batch in batches),
        expectations=sum_counts(batch.expectations for batch in batches),
        unreadable=unreadable_counts.said(unreadable, table_columns),
    )


def sum_counts(counts: Iterable[ExpectationCounts]) -> ExpectationCounts:
    total = ExpectationCounts()
    for batch_counts in counts:
        total = total.plus(batch_counts)
    return total
