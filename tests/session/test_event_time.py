"""Watermarks, windows, streaming dedup and update mode, with late, out-of-order and repeated events.

Three landings into a Delta table, one `dbt run` after each (availableNow: one batch per
landing). The watermark trails the latest event time by 10 minutes.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from dbt_results import failure_messages
from streaming_projects import write_streaming_project

pytestmark = pytest.mark.slow  # update mode against complete mode, landing after landing: make test runs it, test-fast does not

DELAY = timedelta(minutes=10)
SOURCE = "event_fixtures.readings"
DEVICE_TOTALS = (
    f"select device, count(*) as readings, sum(value) as total\n"
    f"from stream({SOURCE})\ngroup by device"
)
MODELS = {
    "window_counts": (
        "{{ config(watermark={'column': 'event_time', 'delay': '10 minutes'}) }}\n"
        "select window.start as window_start, window.end as window_end, device,"
        " count(*) as readings, sum(value) as total\n"
        f"from stream({SOURCE})\n"
        "group by window(event_time, '5 minutes'), device"
    ),
    # The same windows written as they change, open ones too: what the README gives for the
    # last windows when the data ends.
    "window_counts_update": (
        "{{ config(output_mode='update', unique_key=['window_start', 'device'],"
        " watermark={'column': 'event_time', 'delay': '10 minutes'}) }}\n"
        "select window.start as window_start, window.end as window_end, device,"
        " count(*) as readings, sum(value) as total\n"
        f"from stream({SOURCE})\n"
        "group by window(event_time, '5 minutes'), device"
    ),
    "sliding_counts": (
        "{{ config(watermark={'column': 'event_time', 'delay': '10 minutes'}) }}\n"
        "select window.start as window_start, window.end as window_end, count(*) as readings\n"
        f"from stream({SOURCE})\n"
        "group by window(event_time, '10 minutes', '5 minutes')"
    ),
    "session_counts": (
        "{{ config(watermark={'column': 'event_time', 'delay': '10 minutes'}) }}\n"
        "select session_window.start as session_start, session_window.end as session_end,"
        " device, count(*) as readings\n"
        f"from stream({SOURCE})\n"
        "group by session_window(event_time, '5 minutes'), device"
    ),
    "deduped_readings": (
        "{{ config(watermark={'column': 'event_time', 'delay': '10 minutes'},"
        " dedupe={'keys': ['id']}) }}\n"
        f"select id, device, event_time, value from stream({SOURCE})"
    ),
    "totals_update": "{{ config(output_mode='update', unique_key='device') }}\n" + DEVICE_TOTALS,
    "totals_complete": "{{ config(output_mode='complete') }}\n" + DEVICE_TOTALS,
}
T0 = datetime(2026, 1, 1, 12, 0)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


# (id, device, minutes after 12:00, value). Landings 2 and 3 arrive out of order and repeat an
# earlier id (a source delivering twice). Some events are older than the watermark left by the
# landings before (latest event time minus 10 minutes): 1 in landing 2, 2 in landing 3.
LANDINGS = [
    [("r1", "a", 0, 1.0), ("r2", "b", 3, 2.0), ("r3", "a", 7, 3.0), ("r4", "b", 12, 4.0),
     ("r5", "a", 20, 5.0)],
    [("r6", "a", 17, 6.0), ("r7", "b", 13, 7.0), ("r3", "a", 7, 3.0), ("r8", "a", 33, 8.0),
     ("r9", "b", 40, 9.0)],
    [("r10", "a", 36, 10.0), ("r11", "b", -10, 11.0), ("r12", "a", 5, 12.0), ("r8", "a", 33, 8.0),
     ("r13", "b", 60, 13.0)],
]


@pytest.fixture(scope="module")
def project(tmp_path_factory, spark):
    root = tmp_path_factory.mktemp("event_time_project")
    write_streaming_project(root, "event_time", "event_time_out", MODELS)
    spark.sql("create schema if not exists event_fixtures")
    spark.sql(f"create or replace table {SOURCE} "
              "(id string, device string, event_time timestamp, value double) using delta")
    return str(root)


def land(spark, rows) -> None:
    frame = spark.createDataFrame(
        [(id_, device, at(minutes), value) for id_, device, minutes, value in rows],
        "id string, device string, event_time timestamp, value double",
    )
    frame.write.format("delta").mode("append").saveAsTable(SOURCE)


def rows(spark, table: str, order: str) -> list[tuple]:
    return [tuple(r) for r in spark.table(f"event_time_out.{table}").orderBy(*order.split(",")).collect()]


def arrival_watermarks(landed: list[list[tuple]]) -> list[datetime | None]:
    """The watermark each landing meets: latest event time of the landings before, minus the delay."""
    marks, latest = [], None
    for batch in landed:
        marks.append(None if latest is None else at(latest) - DELAY)
        latest = max([latest] * (latest is not None) + [row[2] for row in batch])
    return marks


def late_per_landing(landed: list[list[tuple]]) -> list[list[tuple]]:
    return [
        [row for row in batch if mark is not None and at(row[2]) < mark]
        for batch, mark in zip(landed, arrival_watermarks(landed))
    ]


def on_time(landed: list[list[tuple]]) -> list[tuple]:
    return [
        row for batch, late in zip(landed, late_per_landing(landed))
        for row in batch if not any(row is late_row for late_row in late)
    ]


def final_watermark(landed: list[list[tuple]]) -> datetime:
    """The watermark after every landing: the latest event time minus the delay."""
    return at(max(row[2] for batch in landed for row in batch)) - DELAY


def closed_windows(landed, width: int, slide: int, open_too: bool = False) -> dict:
    """Batch recompute of the windows the final watermark has closed (`open_too`: every window).
    Spark keeps an event in a window while that window is still open at the event's arrival
    (end after the watermark)."""
    final = datetime.max if open_too else final_watermark(landed)
    windows: dict = {}
    for batch, mark in zip(landed, arrival_watermarks(landed)):
        for _, device, minutes, value in batch:
            start = (minutes // slide) * slide
            while start > minutes - width:
                window = (at(start), at(start + width))
                if (mark is None or window[1] > mark) and window[1] <= final:
                    windows.setdefault(window, []).append((device, value))
                start -= slide
    return windows


@pytest.fixture(scope="module")
def runs(dbt, project, spark):
    """After each landing: one `dbt run`, and the update- and complete-mode tables."""
    results, totals = [], []
    for landing in LANDINGS:
        land(spark, landing)
        result = dbt("run", project_dir=project)
        assert result.success, failure_messages(result)
        results.append(result)
        totals.append((rows(spark, "totals_update", "device"), rows(spark, "totals_complete", "device")))
    return results, totals


def test_update_mode_table_equals_complete_mode_after_each_landing(runs):
    _, totals = runs
    for landing, (update, complete) in enumerate(totals, 1):
        assert update == complete, f"after landing {landing}"
    assert [device for device, *_ in totals[-1][0]] == ["a", "b"]


def window_rows(windows: dict) -> list[tuple]:
    found = []
    for (start, end), members in sorted(windows.items()):
        for device in sorted({d for d, _ in members}):
            values = [v for d, v in members if d == device]
            found.append((start, end, device, len(values), sum(values)))
    return found


def test_tumbling_windows_equal_a_recompute_over_the_events_inside_the_watermark(runs, spark):
    expected = window_rows(closed_windows(LANDINGS, 5, 5))
    assert rows(spark, "window_counts", "window_start,device") == expected


def test_in_update_mode_the_last_windows_are_in_the_table_while_append_mode_holds_them_back(runs, spark):
    """When the data ends, the windows the watermark has not passed are in an update-mode
    table, with every event that reached them; append mode writes only the closed ones."""
    updated = rows(spark, "window_counts_update", "window_start,device")
    assert updated == window_rows(closed_windows(LANDINGS, 5, 5, open_too=True))
    appended = rows(spark, "window_counts", "window_start,device")
    still_open = [row for row in updated if row not in appended]
    assert set(appended) <= set(updated) and still_open
    assert all(end > final_watermark(LANDINGS) for _, end, *_ in still_open)


def test_sliding_windows_equal_a_recompute(runs, spark):
    expected = [
        (start, end, len(members))
        for (start, end), members in sorted(closed_windows(LANDINGS, 10, 5).items())
    ]
    assert rows(spark, "sliding_counts", "window_start") == expected


def test_events_behind_the_watermark_are_dropped_and_counted(runs):
    results, _ = runs
    assert [len(late) for late in late_per_landing(LANDINGS)] == [0, 1, 2]
    messages = [{r.node.name: r.message for r in result.result} for result in results]
    assert "late" not in messages[0]["window_counts"]
    assert "1 late row dropped," in messages[1]["window_counts"]
    assert "2 late rows dropped," in messages[2]["window_counts"]


def test_a_record_delivered_twice_appears_once(runs, spark):
    ids = [row[0] for row in rows(spark, "deduped_readings", "id")]
    expected = sorted({row[0] for row in on_time(LANDINGS)})
    assert sorted(ids) == expected
    assert len(ids) == len(set(ids))




def sessions_of(times: list[int], gap: int) -> list[tuple[int, int, int]]:
    """(start, end, events) of the sessions some event times form: sessions merge while they overlap."""
    sessions: list[list[int]] = []
    for minutes in sorted(times):
        if sessions and minutes < sessions[-1][1]:
            sessions[-1][1] = max(sessions[-1][1], minutes + gap)
            sessions[-1][2] += 1
        else:
            sessions.append([minutes, minutes + gap, 1])
    return [tuple(session) for session in sessions]


def closed_sessions(landed, gap: int) -> list[tuple]:
    """Batch recompute of the session windows per device that the final watermark has closed. An
    event counts unless its own session [t, t + gap) had already ended at its arrival."""
    final = at(max(row[2] for batch in landed for row in batch)) - DELAY
    kept: dict[str, list[int]] = {}
    for batch, mark in zip(landed, arrival_watermarks(landed)):
        for _, device, minutes, _ in batch:
            if mark is None or at(minutes + gap) > mark:
                kept.setdefault(device, []).append(minutes)
    return sorted(
        (at(start), at(end), device, events)
        for device, times in kept.items()
        for start, end, events in sessions_of(times, gap)
        if at(end) <= final
    )


def test_session_windows_equal_a_recompute(runs, spark):
    expected = closed_sessions(LANDINGS, 5)
    assert rows(spark, "session_counts", "session_start,device") == expected
