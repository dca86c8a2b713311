-- Served (make serve): at most 5 s behind the landings; the service says when it is not.
{{ config(target_lag='5 seconds') }}

with recordings as (
    select * from stream({{ ref('silver_recordings') }})
),

counted as (
    select
        device_id,
        count(*) as total_recordings
    from recordings
    group by device_id
)

select * from counted
