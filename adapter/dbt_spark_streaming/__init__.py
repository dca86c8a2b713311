"""The runtime's face: what runs inside dbt, as the adapter plugin (adapter/) calls it.

The adapter imports only names from here (`make lint` checks), so the modules below can move and
split without the plugin noticing. Each name is imported when first used: importing the face
starts nothing and pulls in no Spark code that a command does not use.

Where a change goes:

    session.py, classpath.py, metastore.py, run_lock.py
                 the Spark session, its jars, its catalog, and the lock it takes on the lakehouse
    lakehouse.py, errors.py    where files live; every error a person reads (StreamingError)
    config/      a model's settings, read and checked without Spark: a new setting is a field of
                 its materialisation's config and a line in config/settings.py; a new
                 materialisation a line in config/materializations.py
    lifecycle/   what happens to a model's table and checkpoint between runs: full refresh,
                 checkpoint reset, redeploy and rollback, query changes, whether a model
                 has anything new to run (up_to_date.py)
    delta/       Delta tables, their log and properties, Hadoop files, query plans: the only
                 modules, with session.py, that use py4j (`_jvm`, `_jsparkSession`, `_jdf`)
    sources/     streaming sources as temp views
    writes/      a model's query resolved and checked, and the queries that write its table
                 (appends, MERGEs, cdc, COPY INTO); they start queries and know nothing of the
                 run, redeploys or Ctrl-C
    run/         one dbt invocation: the coordinator of a model's steps (model_run.py), Ctrl-C,
                 serving, dbt unit tests of streaming models
    progress/    batch progress: live view, progress table, status file, the service's own time

`make lint` (python_runners/ops/import_rules.py) holds these rules and finds import circles.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_FACE = {
    # errors: every one the person running dbt should read derives from StreamingError
    "StreamingError": "errors",
    "ConfigError": "errors",
    # the Spark session and the lakehouse it works in
    "DEFAULT_MASTER": "session",
    "get_or_create_session": "session",
    "lakehouse_folders": ("lakehouse", "folders_of"),
    # one dbt invocation: its lakehouse, its source views, its run
    "Invocation": "run.invocation",
    # a model's config, read once
    "MATERIALIZATIONS": "config.materializations",
    "STREAMING_MATERIALIZATIONS": "config.materializations",
    "ModelConfig": "config.model",
    "read_model_config": "config.model",
    "config_error_of": "config.model",
    "source_stream_meta": "config.model",
    # the materialisations, one call each
    "materialize_streaming_model": "run.materialize",
    "materialize_copy_into": "run.materialize",
    "copy_source_view": "writes.copy_into",
    # run-operations: reset a checkpoint and keep the table; roll a redeploy back
    "reset_model_checkpoint": "lifecycle.checkpoint_reset",
    "roll_back_model": "lifecycle.rollback",
    # dbt unit tests of streaming models: one batch, or a micro-batch scenario
    "unit_test_input_columns": ("run.model_tests", "input_columns"),
    "unit_test_actual_rows": ("run.model_tests", "actual_rows"),
    "drop_unit_test_views": ("run.model_tests", "drop_views"),
    # what dbt docs shows of a streaming table
    "catalog_stats_of": "delta.catalog",
    # Ctrl-C, served queries
    "stop_streams_on_interrupt": ("run.interruption", "stop_streams"),
    "serve_until_stopped": "run.serving",
    "stop_all_streams": ("run.serving", "stop_all"),
}

__all__ = sorted(_FACE)


def __getattr__(name: str) -> Any:
    try:
        where = _FACE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    module, attribute = where if isinstance(where, tuple) else (where, name)
    value = getattr(import_module(f"{__name__}.{module}"), attribute)
    globals()[name] = value
    return value
