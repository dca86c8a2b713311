{{ config(
    materialized='cdc_table',
    stored_as='scd2',
    keys=['mrn'],
    sequence_by=['changed_at', 'lsn'],
    apply_as_deletes="op = 'D'",
    except_columns=['op', 'changed_at', 'lsn'],
) }}

-- The change feed applied as SCD type 2: every stay of a patient in a ward, valid from the
-- change that began it (__start_at) until the patient's next change (__end_at, null while the
-- patient is still there). Ordered by when the change happened, so the validity is in time.
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
