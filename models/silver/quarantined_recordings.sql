with recordings as (
    select * from stream({{ ref('bronze_recordings') }})
),

quarantined as (
    select
        source_file,
        ingested_at,
        _corrupt_record as raw_record
    from recordings
    where _corrupt_record is not null
)

select * from quarantined
