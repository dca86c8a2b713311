"""Knowing when a streaming model's query changed since its table was last written.

A checkpoint can follow many changes (a new filter, a new column): Spark goes on from where it
was, and the new logic applies to new rows only, while the rows already in the table keep the
old. Each run records what the table was written with (the compiled SQL and the settings that
shape its rows) as table properties; the next run compares, and the model's `on_query_change`
says what a difference does:

- `apply_to_new_rows` (default): the run goes on, says so in its output, and the properties'
  commit records it in the table's history (its userMetadata says what changed);
- `fail`: the run stops before anything starts, with what changed and the ways forward;
- `redeploy`: the new version is built beside the table and swapped in once it has caught up
  (redeploy.py).

A change the checkpoint cannot follow at all still stops the run with Spark's reason, whatever
the policy. A run that starts from no checkpoint (a new model, a full refresh) rebuilds every row
with the new query, so nothing is compared then.
"""

from __future__ import annotations

import re
from typing import Optional, Mapping

from dbt_spark_streaming.config import query_diff
from dbt_spark_streaming.config.query_version import QueryVersion
from dbt_spark_streaming.errors import StreamingModelError

NOTE_WIDTH = 200  # of the run output's one-line note of it
NOTE_SQL_WIDTH = 60  # of each of the SQL's changed lines in that note


def check(model: str, policy: str, query: Optional[QueryVersion], recorded: Mapping[str, str]) -> Optional[str]:
    """Before a run that continues from a checkpoint: None when the query is unchanged; what
    changed when it applies to new rows or is redeployed; a StreamingModelError under `fail`."""
    if query is None:
        return None
    changed = query.changes_since(recorded)
    if changed is None:
        return None
    if policy == "fail":
        raise StreamingModelError(
            f"Model {model}: its query changed since the table was last written, and "
            f"on_query_change is 'fail':\n{changed}\nNothing was started. To apply the change to "
            f"new rows only (rows already in the table keep the old logic), set "
            f"on_query_change='apply_to_new_rows' for this run; to rebuild every row with it while "
            f"readers keep the old table until the new one has caught up, set "
            f"on_query_change='redeploy'; or undo the change."
        )
    return changed


def applied_note(changed: str) -> str:
    """The run output's words for a change applied to new rows only: what changed, in one line."""
    return f"; query changed since the last run ({summary(changed)}): applied to new rows only"


def history_note(changed: str) -> str:
    """The userMetadata of the commit that records the new query."""
    return "query changed, applied to new rows only:\n" + changed


def summary(changed: str, width: int = NOTE_WIDTH) -> str:
    """What changes_since (or any reason given in lines) says, in one line of at most `width`:
    each changed setting as it says it, then the SQL's first changed lines."""
    items, sql, more_sql = [], [], 0
    in_sql = False
    for raw in changed.strip("\n").splitlines():
        line = raw.strip()
        if line == query_diff.SQL_HEADER:
            in_sql = True
        elif in_sql and line[:2] in ("- ", "+ "):
            sql.append(line)
        elif in_sql and re.fullmatch(r"\.\.\. \d+ more changed lines", line):
            more_sql += int(line.split()[1])
        elif raw.startswith(query_diff.PART_INDENT) and items:  # one part of a setting said over lines
            items[-1] += (" " if items[-1].endswith(":") else "; ") + line
        elif line:
            items.append(line)
    if sql:
        more_sql += len(sql) - 2 if len(sql) > 2 else 0
        more = f" (+{more_sql} more lines)" if more_sql else ""
        items.append(f"SQL: {' / '.join(query_diff.cut(line, NOTE_SQL_WIDTH) for line in sql[:2])}{more}")
    shown: list[str] = []
    for index, item in enumerate(items):
        room = width if index == len(items) - 1 else width - len(" | +99 more")
        if shown and len(" | ".join([*shown, item])) > room:
            break
        shown.append(item)
    left = len(items) - len(shown)
    return query_diff.cut(" | ".join(shown), width - (len(f" | +{left} more") if left else 0)) + (
        f" | +{left} more" if left else "")

