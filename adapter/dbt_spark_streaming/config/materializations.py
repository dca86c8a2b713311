"""The project's materialisations and what each one is: the one list Python and Jinja read.

A new materialisation, or a property of one that changes, is one line here. The macros ask the
adapter (`adapter.streaming_materializations()`), so Jinja holds no copy of the list.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Materialization:
    name: str
    streams: bool  # runs a streaming query into its table
    has_checkpoint: bool  # keeps a checkpoint of its own (copy_into keeps a load log instead)
    can_be_reset: bool  # reset-checkpoint can say where its next run starts reading
    can_be_redeployed: bool  # on_query_change='redeploy' rebuilds it beside its table


MATERIALIZATIONS = {
    m.name: m
    for m in (
        Materialization("streaming_table", streams=True, has_checkpoint=True, can_be_reset=True,
                        can_be_redeployed=True),
        Materialization("cdc_table", streams=True, has_checkpoint=True, can_be_reset=True,
                        can_be_redeployed=False),
        Materialization("copy_into", streams=False, has_checkpoint=False, can_be_reset=False,
                        can_be_redeployed=False),
    )
}

# Every materialisation of this project: its config is read and checked whole (config/model.py).
STREAMING_MATERIALIZATIONS = tuple(MATERIALIZATIONS)
# The ones that run a streaming query, each with a checkpoint of its own.
STREAM_MATERIALIZATIONS = tuple(name for name, m in MATERIALIZATIONS.items() if m.streams)
RESETTABLE_MATERIALIZATIONS = tuple(name for name, m in MATERIALIZATIONS.items() if m.can_be_reset)
REDEPLOYABLE_MATERIALIZATIONS = tuple(name for name, m in MATERIALIZATIONS.items() if m.can_be_redeployed)


def streams(materialized: object) -> bool:
    """Whether a model of this materialisation runs a streaming query (False for dbt's own)."""
    found = MATERIALIZATIONS.get(str(materialized))
    return found is not None and found.streams
