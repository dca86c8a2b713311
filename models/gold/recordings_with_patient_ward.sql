{{ config(materialized='table') }}

-- A point-in-time join: each recording with the ward its patient was in when it was taken,
-- the version of patient_ward_history whose validity holds recorded_at. Recomputed in batch
-- on every run (see the model's description for why not a stream).
with recordings as (
    select * from {{ ref('silver_recordings') }}
),

ward_history as (
    select * from {{ ref('patient_ward_history') }}
),

attributed as (
    select
        recordings.recording_id,
        recordings.mrn,
        recordings.recorded_at,
        recordings.heartbeat,
        recordings.ward as device_ward,
        ward_history.ward as patient_ward,
        ward_history.__start_at.changed_at as in_ward_since
    from recordings
    left join ward_history
        on
            recordings.mrn = ward_history.mrn
            and recordings.recorded_at >= ward_history.__start_at.changed_at
            and (
                ward_history.__end_at is null
                or recordings.recorded_at < ward_history.__end_at.changed_at
            )
)

select * from attributed
