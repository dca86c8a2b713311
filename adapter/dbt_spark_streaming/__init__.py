"""The runtime's face: what runs inside dbt, as the adapter plugin (adapter/) calls it.

The adapter imports only names from here (`make lint` checks), so the modules below can move and
split without the plugin noticing. Each name is imported when first used: importing the face
starts nothing and pulls in no Spark code that a command does not use.

Where a change goes (each room's __init__.py says what it is for and which rooms it may import;
a room imports only rooms below it here, and the modules above the rooms from anywhere):

    session.py, classpath.py, metastore.py, run_lock.py
                 the Spark session, its jars, its catalog, and the lock it takes on the lakehouse
    lakehouse.py, errors.py    where files live; every error a person reads (StreamingError)
    run/         one dbt invocation: each materialisation one call (materialize.py), the steps
                 of a model's run in order (model_run.py), Ctrl-C, the summary, and serving the
                 invocation's queries until stopped (serving.py)
    serve/       the serving loop's scheduler: runs on_new_data models again when an input
                 commits (dataflow.py), the inputs' watches, the pause after a failure
    unit_tests/  dbt unit tests of streaming models: one batch, or a micro-batch scenario
    lifecycle/   what happens to a model's table and checkpoint between runs: full refresh,
                 redeploy and rollback, query changes, whether a model has anything new to run
                 (up_to_date.py); checkpoint reset in lifecycle/reset/
    writes/      a model's query resolved and checked, and the queries that write its table
                 (appends, MERGEs, COPY INTO; cdc in writes/cdc/); they start queries and know
                 nothing of the run, redeploys or Ctrl-C
    sources/     streaming sources as temp views
    progress/    batch progress: live view, progress table, status file, the service's own time
    delta/       Delta tables, their log and properties, catalog, constraints
    driver/      the warm driver: a process's running JVM that dbt commands attach to
                 (host.py), and a command's side of it (attach.py)
    jvm/         the JVM's handles that are not Delta's: Hadoop files, query plans, a
                 checkpoint's logs, MemoryStream; with delta/, driver/ and session.py, the only
                 modules that use py4j (`_jvm`, `_jsparkSession`, `_jdf`)
    config/      a model's settings, read and checked without Spark: a new setting is a field of
                 its materialisation's config and a line in config/settings.py; a new
                 materialisation a line in config/materializations.py
    lint/        the streaming lint of a project's SQL, without Spark

`make lint` (python_runners/ops/import_rules.py) holds these rules and finds import circles.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

# What a type checker sees: each name from its module, as _FACE below loads it when first used
# (tests/unit/test_runtime_face.py checks they agree). ruff cannot tell that __all__, built from
# _FACE, exports them, so F401 is off for this file:
# ruff: noqa: F401
if TYPE_CHECKING:
    from dbt_spark_streaming.config.materializations import MATERIALIZATIONS, STREAMING_MATERIALIZATIONS
    from dbt_spark_streaming.config.model import (
        config_error_of, ModelConfig, read_model_config, source_stream_meta,
    )
    from dbt_spark_streaming.delta.catalog import catalog_stats_of
    from dbt_spark_streaming.errors import ConfigError, StreamingError
    from dbt_spark_streaming.lakehouse import folders_of as lakehouse_folders
    from dbt_spark_streaming.lifecycle.reset.checkpoint_reset import reset_model_checkpoint
    from dbt_spark_streaming.lifecycle.maintain_models import maintain_models
    from dbt_spark_streaming.lifecycle.rollback import roll_back_model
    from dbt_spark_streaming.run.interruption import stop_streams as stop_streams_on_interrupt
    from dbt_spark_streaming.run.invocation import Invocation
    from dbt_spark_streaming.run.materialize import materialize
    from dbt_spark_streaming.run.serving import serve_until_stopped, stop_all as stop_all_streams
    from dbt_spark_streaming.session import DEFAULT_MASTER, get_or_create_session
    from dbt_spark_streaming.unit_tests.model_tests import (
        actual_rows as unit_test_actual_rows, drop_views as drop_unit_test_views,
        input_columns as unit_test_input_columns,
    )
    from dbt_spark_streaming.writes.copy_into import copy_source_view

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
    # the materialisations, one call
    "materialize": "run.materialize",
    "copy_source_view": "writes.copy_into",
    # run-operations: reset a checkpoint and keep the table; roll a redeploy back
    "reset_model_checkpoint": "lifecycle.reset.checkpoint_reset",
    "roll_back_model": "lifecycle.rollback",
    # run-operation: compact and VACUUM the streaming models' tables
    "maintain_models": "lifecycle.maintain_models",
    # dbt unit tests of streaming models: one batch, or a micro-batch scenario
    "unit_test_input_columns": ("unit_tests.model_tests", "input_columns"),
    "unit_test_actual_rows": ("unit_tests.model_tests", "actual_rows"),
    "drop_unit_test_views": ("unit_tests.model_tests", "drop_views"),
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
