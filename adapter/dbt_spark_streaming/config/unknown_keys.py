"""dbt keeps any key in a model's config, so a misspelt streaming setting would be ignored and
the model run on the default: every key is refused unless it is a setting of the model's
materialisation (settings.py) or one of dbt's own configs, naming the nearest valid one."""

from __future__ import annotations

import difflib
from typing import Any, Mapping, Optional

from dbt_spark_streaming.config import settings
from dbt_spark_streaming.config.common import ModelConfigError


def refuse_unknown_keys(model: str, materialized: str, config: Mapping[str, Any]) -> None:
    """dbt keeps any key in a model's config, so a misspelt streaming setting would be ignored
    and the model run on the default. A key is the materialisation's setting (settings.py) or
    one of dbt's own configs; a setting of another streaming materialisation set to none is how
    a model unsets a folder's `+<key>`."""
    allowed = settings.allowed(materialized)
    for key, value in config.items():
        key = str(key)
        if key in allowed:
            continue
        others = settings.owners(key)
        if others and value is None:
            continue
        raise ModelConfigError(_unknown_key(model, materialized, key, others))


def _unknown_key(model: str, materialized: str, key: str, others: list[str]) -> str:
    own = settings.SETTINGS[materialized]
    listed = f"{materialized} settings: {', '.join(own)}"
    meant = _nearest(key, [*own, *settings.ALSO_READ.get(materialized, ())])
    if others:
        guess = f"; did you mean {meant!r}?" if meant else "."
        switch = (f", or make it a {others[0]} (materialized='{others[0]}')" if len(others) == 1
                  else "")
        return (
            f"Model {model}: config {key!r} is a {' and '.join(others)} setting; a {materialized} "
            f"model has no such setting{guess} Remove it{switch} (set {key}=none in the model to "
            f"unset a folder's +{key}). {listed}."
        )
    meant = meant or _nearest(key, sorted(settings.dbt_configs()))
    guess = f"; did you mean {meant!r}?" if meant else ", nor one of dbt's model configs."
    return (
        f"Model {model}: config {key!r} is not a {materialized} setting{guess} {listed}. "
        "Unknown keys are refused rather than ignored; dbt's own configs (tags, meta, "
        "pre-hook, ...) are fine, and keys of your own go under meta."
    )


def _nearest(key: str, names: list[str]) -> Optional[str]:
    """The name `key` is most likely a misspelling of, among `names`."""
    lookalike = settings.LOOKALIKES.get(key.lower())
    if lookalike in names and lookalike != key:
        return lookalike
    close = difflib.get_close_matches(key.lower(), names, n=1, cutoff=0.6)
    return close[0] if close else None
