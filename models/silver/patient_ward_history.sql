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
select * from {{ ref('patient_changes_readable') }}
