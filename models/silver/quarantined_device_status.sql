with reports as (
    select * from stream({{ ref('bronze_device_status') }})
),

quarantined as (
    select
        source_file,
        ingested_at,
        _corrupt_record as raw_record
    from reports
    where _corrupt_record is not null
)

select * from quarantined
