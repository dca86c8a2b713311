with recordings as (
    select * from stream({{ ref('bronze_recordings') }})
),

devices as (
    select * from {{ ref('devices') }}
),

typed as (
    select
        recording_id,
        device_id,
        mrn,
        cast(heartbeat as double) as heartbeat,
        timestamp_seconds(time) as recorded_at
    from recordings
    where _corrupt_record is null
),

enriched as (
    select
        typed.recording_id,
        typed.device_id,
        typed.mrn,
        typed.recorded_at,
        typed.heartbeat,
        devices.device_model,
        devices.ward
    from typed
    left join devices
        on typed.device_id = devices.device_id
)

select * from enriched
