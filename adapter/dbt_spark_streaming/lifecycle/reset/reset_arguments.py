"""Where a checkpoint reset says the next run starts reading: its arguments, read and checked.

`dbt run-operation reset_checkpoint --args` (and the command line's --from-* options) give exactly
one of from_now, from_version, from_timestamp, from_offsets; each becomes a StartingPoint, and
times are read, said and kept here (milliseconds since the epoch, UTC unless a zone is given).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping, Optional

from dbt_spark_streaming.errors import ConfigError

KINDS = ("now", "version", "timestamp", "offsets")
# The --args of `dbt run-operation reset_checkpoint` (and the command line's --from-* options).
ARGUMENTS = {"from_now": "now", "from_version": "version", "from_timestamp": "timestamp",
             "from_offsets": "offsets"}
_TIME_FORMATS = ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%d")


class CheckpointResetError(ConfigError):
    pass


@dataclass(frozen=True)
class StartingPoint:
    kind: str  # one of KINDS
    version: Optional[int] = None
    timestamp_ms: Optional[int] = None  # for `timestamp`, and the reset's own time for `now`
    offsets: Optional[str] = None  # Kafka startingOffsets JSON

    @classmethod
    def from_args(cls, model: str, args: Mapping[str, Any], now_ms: Optional[int] = None) -> "StartingPoint":
        """Exactly one of from_now, from_version, from_timestamp, from_offsets."""
        given = {key: value for key, value in args.items()
                 if key in ARGUMENTS and value not in (None, False, "")}
        if len(given) != 1:
            said = ", ".join(sorted(given)) or "none"
            raise CheckpointResetError(
                f"Model {model}: say where the next run starts reading, with exactly one of "
                f"{', '.join(ARGUMENTS)} (given: {said}). from_now: only input arriving after "
                "the reset; from_version: N (Delta inputs); from_timestamp: '2026-01-31 12:00:00' "
                "(UTC); from_offsets: a Kafka startingOffsets JSON."
            )
        (key, value), = given.items()
        kind = ARGUMENTS[key]
        now_ms = now_ms if now_ms is not None else current_ms()
        if kind == "now":
            if value is not True and str(value).lower() != "true":
                raise CheckpointResetError(f"Model {model}: from_now is {value!r}; give true.")
            return cls("now", timestamp_ms=now_ms)
        if kind == "version":
            if isinstance(value, bool) or not str(value).isdigit():
                raise CheckpointResetError(
                    f"Model {model}: from_version is {value!r}; give a Delta version, a whole "
                    "number from 0 (the first version the next run reads, as Delta's startingVersion)."
                )
            return cls("version", version=int(value))
        if kind == "timestamp":
            moment = parse_timestamp(model, str(value))
            if moment > now_ms:
                raise CheckpointResetError(
                    f"Model {model}: from_timestamp {value} is in the future; give a time already "
                    "past, or from_now to read only what arrives from now on."
                )
            return cls("timestamp", timestamp_ms=moment)
        offsets = value if isinstance(value, str) else json.dumps(value)
        try:
            parsed = json.loads(offsets)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict) or not parsed:
            raise CheckpointResetError(
                f"Model {model}: from_offsets is {value!r}; give Kafka offsets per topic and "
                'partition as JSON, e.g. {"readings": {"0": 1200, "1": 1180}} (-2 earliest, -1 latest).'
            )
        return cls("offsets", offsets=json.dumps(parsed, sort_keys=True))

    def describe(self) -> str:
        if self.kind == "now":
            return f"now ({iso(self.timestamp_ms)})"
        if self.kind == "version":
            return f"version {self.version}"
        if self.kind == "timestamp":
            return f"timestamp {iso(self.timestamp_ms)}"
        return f"offsets {self.offsets}"

    def as_json(self) -> dict:
        return {key: value for key, value in self.__dict__.items() if value is not None}


def parse_timestamp(model: str, text: str) -> int:
    """Milliseconds since the epoch; a time without a zone is UTC."""
    value = text.strip()
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        moment = None
        for pattern in _TIME_FORMATS:
            try:
                moment = datetime.strptime(value, pattern)
                break
            except ValueError:
                continue
    if moment is None:
        raise CheckpointResetError(
            f"Model {model}: from_timestamp {text!r} is not a time; give one as "
            "'2026-01-31 12:00:00' (UTC) or ISO 8601 with a zone, '2026-01-31T12:00:00+01:00'."
        )
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


def current_ms() -> int:
    return int(datetime.now(timezone.utc).timestamp() * 1000)


def iso(ms: Optional[int], sep: str = "T") -> str:
    moment = datetime.fromtimestamp(ms / 1000, timezone.utc)
    return moment.isoformat(sep=sep, timespec="milliseconds").replace("+00:00", "" if sep == " " else "Z")
