{{ config(materialized='ephemeral') }}

-- The patient change feed as both cdc_tables apply it: readable rows (unreadable lines stay in
-- bronze_patient_changes with their raw text) with a real timestamp. Ephemeral: dbt inlines it
-- into each model that selects from it, so it is no query or table of its own.
with changes as (
    select * from stream({{ ref('bronze_patient_changes') }})
),

readable as (
    select
        mrn,
        ward,
        op,
        lsn,
        timestamp_seconds(changed_at) as changed_at
    from changes
    where _corrupt_record is null
)

select * from readable
