"""The service's knobs in the environment (STREAM_SERVE_...), read the same way: a whole number,
or a message naming the variable, what it counts and an example."""

from __future__ import annotations

import os
from typing import Mapping

from dbt_spark_streaming.errors import StreamingModelError


def whole_number(variable: str, default: int, least: int, what: str,
                 environ: Mapping[str, str] = os.environ) -> int:
    value = environ.get(variable, "")
    if value.isdigit() and int(value) >= least:
        return int(value)
    if value:
        raise StreamingModelError(f"{variable} is {value!r}; give {what}, e.g. {default}.")
    return default
