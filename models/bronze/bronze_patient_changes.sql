with changes as (
    select * from {{ source('landing', 'patient_changes') }}
),

ingested as (
    select
        mrn,
        ward,
        op,
        lsn,
        changed_at,
        _corrupt_record,
        _rescued_data,
        _metadata.file_path as source_file,
        current_timestamp() as ingested_at
    from changes
)

select * from ingested
