"""Names a setting gives to something Spark or Delta will use as an identifier (an expectation, a
backfill, a constraint): letters, digits and underscores, not starting with a digit."""

from __future__ import annotations

import re
from typing import Any

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_identifier(value: Any) -> bool:
    return isinstance(value, str) and bool(_IDENTIFIER.match(value))
