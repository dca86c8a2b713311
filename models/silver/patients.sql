{{ config(
    materialized='cdc_table',
    stored_as='scd1',
    keys=['mrn'],
    sequence_by='lsn',
    apply_as_deletes="op = 'D'",
    except_columns=['op'],
) }}

-- The change feed applied as SCD type 1: each admitted patient's current ward. A discharge
-- removes the patient; a change older than the one applied (it landed late) is not applied.
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
