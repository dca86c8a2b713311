{{ config(watermark=[
    {'column': 'recorded_at', 'delay': '1 hour'},
    {'column': 'reported_at', 'delay': '1 hour'},
]) }}

-- A stream-stream join: each recording with the status report its device sent in the
-- 10 minutes up to the recording. The time bound and the watermarks let Spark forget a
-- report or a recording once nothing can join it any more.
with recordings as (
    select * from stream({{ ref('silver_recordings') }})
),

status_reports as (
    select * from stream({{ ref('silver_device_status') }})
),

joined as (
    select
        recordings.recording_id,
        recordings.device_id,
        recordings.recorded_at,
        recordings.heartbeat,
        status_reports.reported_at,
        status_reports.battery_pct,
        status_reports.signal
    from recordings
    inner join status_reports
        on
            recordings.device_id = status_reports.device_id
            and recordings.recorded_at >= status_reports.reported_at
            and recordings.recorded_at < status_reports.reported_at + interval 10 minutes
)

select * from joined
