import pytest


@pytest.fixture(scope="class")
def dbt_profile_target(spark):
    """dbt's adapter suite against our plugin, on the suite's shared in-process session."""
    return {"type": "spark_streaming", "method": "session", "host": "localhost", "threads": 1}
