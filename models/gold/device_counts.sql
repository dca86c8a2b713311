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
