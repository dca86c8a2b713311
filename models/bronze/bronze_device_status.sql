with reports as (
    select * from {{ source('landing', 'device_status') }}
),

ingested as (
    select
        device_id,
        time,
        battery_pct,
        signal,
        _corrupt_record,
        _rescued_data,
        _metadata.file_path as source_file,
        current_timestamp() as ingested_at
    from reports
)

select * from ingested
