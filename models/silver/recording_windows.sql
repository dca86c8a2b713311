{{ config(
    watermark={'column': 'recorded_at', 'delay': '10 minutes'},
    dedupe={'keys': ['recording_id']},
) }}

-- Each recording once, with the 5-minute window it falls in: a recording delivered twice is
-- dropped, and one more than 10 minutes older than the newest seen is dropped as late (the
-- dedupe keeps its state only that long). Its micro-batch behaviour is checked by the
-- unit test recording_windows_drop_duplicates_and_late_rows (_silver__models.yml).
with recordings as (
    select * from stream({{ ref('silver_recordings') }})
),

windowed as (
    select
        recording_id,
        device_id,
        ward,
        heartbeat,
        recorded_at,
        window(recorded_at, '5 minutes').start as window_start
    from recordings
)

select * from windowed
