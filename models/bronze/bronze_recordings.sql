with recordings as (
    select * from {{ source('landing', 'recordings') }}
),

ingested as (
    select
        recording_id,
        device_id,
        mrn,
        time,
        heartbeat,
        _corrupt_record,
        _rescued_data,
        _metadata.file_path as source_file,
        current_timestamp() as ingested_at
    from recordings
)

select * from ingested
