"""A real S3 API on loopback (python_runners/infra/s3_store.py) for the object-storage tests."""

from __future__ import annotations

import pytest

from python_runners.infra.s3_store import ACCESS_KEY, REGION, SECRET_KEY, S3Store


@pytest.fixture(scope="module")
def s3_store(tmp_path_factory):
    with S3Store(tmp_path_factory.mktemp("s3-store")) as store:
        yield store


def s3_env(store: S3Store) -> dict[str, str]:
    """What the profile's `s3` target reads: the store's endpoint and AWS's usual credentials."""
    return {"S3_ENDPOINT": store.endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": REGION}
