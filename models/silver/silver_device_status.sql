with reports as (
    select * from stream({{ ref('bronze_device_status') }})
),

typed as (
    select
        device_id,
        timestamp_seconds(time) as reported_at,
        battery_pct,
        signal
    from reports
    where _corrupt_record is null
)

select * from typed
