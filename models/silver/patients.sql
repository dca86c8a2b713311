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
select * from {{ ref('patient_changes_readable') }}
