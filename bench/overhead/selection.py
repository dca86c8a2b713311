"""What both sides of the overhead benchmark build: the demo's recordings path, seed to gold.

bronze_recordings, silver_recordings (joined with the devices seed), quarantined_recordings,
gold device_counts and ward_heart_rates: five streaming writes and one seed. The device status
half of the demo is left out, so both sides read one landing folder.
"""

SEED = "devices"
STREAMING_MODELS = (
    "bronze_recordings", "silver_recordings", "quarantined_recordings",
    "device_counts", "ward_heart_rates",
)
LAYERS = {
    "bronze_recordings": "bronze", "silver_recordings": "silver",
    "quarantined_recordings": "silver", "device_counts": "gold", "ward_heart_rates": "gold",
}


def gold_rows(spark) -> list:
    """Both gold tables' rows, sorted, for checking that the two sides built the same thing."""
    return [
        [str(value) for value in row]
        for table in ("gold.device_counts", "gold.ward_heart_rates")
        for row in spark.table(table).orderBy(*spark.table(table).columns[:1]).collect()
    ]
