{{ config(expectations=[
    {'name': 'heartbeat_plausible', 'expression': 'heartbeat between 20 and 250',
     'action': 'quarantine'},
    {'name': 'device_known', 'expression': 'device_model is not null', 'action': 'warn'},
    {'name': 'not_from_the_future', 'expression': 'recorded_at <= current_timestamp()',
     'action': 'drop'},
]) }}

-- Kept in step with their plain-Python twins in python_runners/demo/recording_rules.py.
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
