with recordings as (
    select * from stream({{ ref('silver_recordings') }})
),

per_ward as (
    select
        coalesce(ward, 'unknown') as ward,
        count(*) as total_recordings,
        approx_count_distinct(mrn) as patients,
        round(avg(heartbeat), 2) as avg_heartbeat,
        min(heartbeat) as min_heartbeat,
        max(heartbeat) as max_heartbeat
    from recordings
    group by coalesce(ward, 'unknown')
)

select * from per_ward
