"""A copy_into model's config: the folder it loads (its one file source) and whether to reload
every file (`force`); no trigger, no checkpoint (its load log takes that place)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from dbt_spark_streaming.config.backfills import backfills_from_config
from dbt_spark_streaming.config.common import (
    ModelConfig, ModelConfigError, SourceRead, checkpoint_of, common_settings,
)

_TRUE, _FALSE = (True, "true", "True"), (False, None, "false", "False")


@dataclass(frozen=True)
class CopyIntoConfig(ModelConfig):
    force: bool = False

    @property
    def copy_source(self) -> SourceRead:
        """The one file source a copy_into model loads (checked when the config was read)."""
        return self.sources[0]

    def documented(self) -> dict[str, str]:
        return {"copy_into.load_log": self.checkpoint, **self.expectations.documented()}


def read_copy_into(node: Mapping[str, Any], graph: Mapping[str, Any], run_vars: Mapping[str, Any]) -> CopyIntoConfig:
    """A copy_into model's config, checked whole."""
    name, config = node["name"], node["config"]
    common = common_settings(node, graph)
    materialized = common["materialized"]
    backfills_from_config(name, materialized, "append", config.get("backfills"))  # refused
    _appends_only(name, materialized, config.get("output_mode"))  # a folder's +output_mode
    return CopyIntoConfig(
        **common,
        checkpoint=checkpoint_of(node, "load_log_location"),
        force=_force(name, config.get("force", run_vars.get("copy_into_force"))),
    )


def _appends_only(model: str, materialized: str, output_mode: Any) -> None:
    """A copy_into model appends each load; a folder's +output_mode: append covers it too."""
    if output_mode not in (None, "", "append"):
        raise ModelConfigError(
            f"Model {model}: a {materialized} model appends the rows of each load; output_mode "
            f"{output_mode!r} does not apply. Remove it (or set output_mode=none in the model to "
            "unset a folder's +output_mode)."
        )


def _force(model: str, force: Any) -> bool:
    if force in _TRUE:
        return True
    if force in _FALSE:
        return False
    raise ModelConfigError(
        f"Model {model}: force {force!r} is not valid; give true (reload every file once) or "
        "false (the default), in the model's config or with --vars '{copy_into_force: true}'."
    )
