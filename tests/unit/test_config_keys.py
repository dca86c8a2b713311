"""Unknown keys in a streaming model's config are errors (runtime/config/settings.py, config/model.py):
a misspelt setting names the nearest valid one instead of running on the default, while every
config dbt and dbt-spark give a model, and every key the demo project sets, is accepted."""

from __future__ import annotations

import re

import jinja2
import pytest
import yaml
from dbt.adapters.spark.impl import SparkConfig
from dbt.artifacts.resources import ModelConfig as DbtModelConfig

from dbt_spark_streaming.config import settings
from dbt_spark_streaming.config.cdc import SETTINGS as CDC_SETTINGS
from python_runners import REPO_ROOT
from dbt_spark_streaming.config.model import (
    STREAMING_MATERIALIZATIONS, ModelConfigError, read_model_config,
)

FILES = {"source_name": "landing", "name": "events",
         "meta": {"stream": {"format": "json", "path": "events", "schema": "id int"}}}
CDC = {"keys": ["id"], "sequence_by": "lsn"}
# What a model needs besides its materialisation to be read at all.
NEEDS = {"streaming_table": {}, "cdc_table": CDC, "copy_into": {}}


def node(materialized: str = "streaming_table", name: str = "m", **config):
    return {
        "name": name, "alias": name, "schema": "s", "unique_id": f"model.p.{name}",
        "resource_type": "model", "raw_code": "",
        "sources": [["landing", "events"]] if materialized == "copy_into" else [],
        "config": {"materialized": materialized, **NEEDS[materialized], **config},
    }


def read(model):
    return read_model_config(model, {"nodes": {model["unique_id"]: model},
                                     "sources": {"source.p.landing.events": FILES}})


def refusal(model) -> str:
    with pytest.raises(ModelConfigError) as raised:
        read(model)
    return str(raised.value)


@pytest.fixture(autouse=True)
def lakehouse(tmp_path, monkeypatch):
    monkeypatch.setenv("LAKEHOUSE_DIR", str(tmp_path))


# --- a misspelt setting names the one meant -----------------------------------------------------

def test_a_misspelt_output_mode_is_refused_naming_output_mode():
    message = refusal(node(outptu_mode="append"))

    assert message.startswith(
        "Model m: config 'outptu_mode' is not a streaming_table setting; did you mean "
        "'output_mode'? streaming_table settings: output_mode, unique_key, trigger,"
    )
    assert "keys of your own go under meta" in message


def test_a_misspelt_cdc_setting_is_refused_naming_it():
    message = refusal(node("cdc_table", sequnce_by="changed_at"))

    assert "Model m: config 'sequnce_by' is not a cdc_table setting; did you mean 'sequence_by'?" in message


def test_a_misspelt_copy_into_setting_is_refused_naming_it():
    message = refusal(node("copy_into", load_log_locaton="logs/m"))

    assert ("Model m: config 'load_log_locaton' is not a copy_into setting; did you mean "
            "'load_log_location'? copy_into settings: load_log_location, force,") in message


@pytest.mark.parametrize("materialized, key, meant", [
    ("streaming_table", "outputMode", "output_mode"),  # Spark's spelling
    ("streaming_table", "mode", "output_mode"),
    ("streaming_table", "checkpoint", "checkpoint_location"),
    ("streaming_table", "watermarks", "watermark"),
    ("streaming_table", "backfill", "backfills"),
    ("streaming_table", "materialised", "materialized"),  # dbt's own, misspelt
    ("cdc_table", "order_by", "sequence_by"),
    ("cdc_table", "scd_type", "stored_as"),
    ("cdc_table", "except_column_list", "except_columns"),  # Lakeflow's name
    ("copy_into", "checkpoint", "load_log_location"),
    ("copy_into", "forced", "force"),
])
def test_the_nearest_valid_name_is_suggested(materialized, key, meant):
    assert f"config {key!r} is not a {materialized} setting; did you mean {meant!r}?" in refusal(
        node(materialized, **{key: "x"}))


def test_a_key_like_nothing_is_refused_too():
    message = refusal(node(colour="red"))

    assert message.startswith(
        "Model m: config 'colour' is not a streaming_table setting, nor one of dbt's model configs.")


def test_a_setting_of_another_materialisation_is_refused_saying_whose_it_is():
    assert refusal(node(keys=["id"])).startswith(
        "Model m: config 'keys' is a cdc_table setting; a streaming_table model has no such "
        "setting. Remove it, or make it a cdc_table (materialized='cdc_table') (set keys=none "
        "in the model to unset a folder's +keys).")
    assert "did you mean 'load_log_location'?" in refusal(node("copy_into", checkpoint_location="x"))
    assert "config 'trigger' is a streaming_table and cdc_table setting" in refusal(
        node("copy_into", trigger="5 seconds"))


def test_a_folder_setting_a_model_unsets_with_none_is_accepted():
    read(node("copy_into", trigger=None, watermark=None))


def test_copy_into_checks_its_keys_before_anything_else():
    """It used to return before the check."""
    assert "did you mean 'force'" in refusal(node("copy_into", froce=True))


@pytest.mark.parametrize("mode, accepted", [(None, True), ("append", True), ("complete", False)])
def test_a_copy_into_in_a_folder_with_output_mode_append_is_fine(mode, accepted):
    model = node("copy_into", output_mode=mode)
    if accepted:
        read(model)
    else:
        assert "output_mode 'complete' does not apply" in refusal(model)


# --- what is accepted ---------------------------------------------------------------------------

def test_the_cdc_settings_are_changes_settings():
    assert set(CDC_SETTINGS) <= set(settings.SETTINGS["cdc_table"])


@pytest.mark.parametrize("materialized", STREAMING_MATERIALIZATIONS)
def test_each_materialisation_accepts_its_own_settings(materialized):
    for key in settings.SETTINGS[materialized]:
        assert key in settings.allowed(materialized)


DBT_KEYS = (
    "access", "alias", "batch_size", "begin", "buckets", "clustered_by", "column_types",
    "concurrent_batches", "contract", "database", "docs", "enabled", "event_time", "file_format",
    "freshness", "full_refresh", "grants", "group", "incremental_predicates",
    "incremental_strategy", "location_root", "lookback", "materialized",
    "merge_update_columns", "meta", "on_configuration_change", "on_schema_change", "options",
    "packages", "partition_by", "persist_docs", "post-hook", "pre-hook", "quoting", "schema",
    "sql_header", "static_analysis", "tags", "unique_key",
)


def test_every_dbt_and_dbt_spark_config_is_known():
    assert set(DBT_KEYS) <= settings.dbt_configs()


@pytest.mark.parametrize("materialized", STREAMING_MATERIALIZATIONS)
def test_a_model_with_every_config_dbt_and_dbt_spark_put_there_reads_fine(materialized):
    """As dbt writes a node's config: every field of its ModelConfig and dbt-spark's SparkConfig,
    with their defaults, and the keys dbt's macros set (set_sql_header)."""
    dbt_defaults = {
        **DbtModelConfig().to_dict(omit_none=False), **SparkConfig().to_dict(omit_none=False),
        "sql_header": "set spark.sql.ansi.enabled = true", "tags": ["nightly"],
        "meta": {"owner": "ward team"}, "pre-hook": [{"sql": "select 1", "transaction": True}],
        "file_format": "delta", "docs": {"show": True, "node_color": "red"},
    }
    model = node(materialized)
    model["config"] = {**dbt_defaults, **model["config"]}

    assert read(model).materialized == materialized


# --- the demo project ---------------------------------------------------------------------------

def _config_call(sql: str) -> dict:
    """The keys a model's `{{ config(...) }}` sets, rendered as dbt renders it."""
    captured: dict = {}
    call = re.search(r"\{\{\s*config\((.*?)\)\s*\}\}", sql, re.S)
    if call:
        template = jinja2.Environment().from_string("{{ config(" + call.group(1) + ") }}")
        template.render(config=lambda **keys: captured.update(keys) or "")
    return captured


def _folder_configs(tree: dict, parts: tuple[str, ...]) -> dict:
    """The `+` configs of dbt_project.yml that hold for a model in folder `parts`."""
    found = {key[1:]: value for key, value in tree.items() if key.startswith("+")}
    if parts and isinstance(tree.get(parts[0]), dict):
        found.update(_folder_configs(tree[parts[0]], parts[1:]))
    return found


def demo_graph() -> dict:
    """The demo's models as dbt puts them in its graph: dbt's defaults, the folder's configs, the
    model's config() (the same a `dbt parse` gives, without running dbt)."""
    project = yaml.safe_load((REPO_ROOT / "dbt_project.yml").read_text())
    models_tree = project["models"][project["name"]]
    nodes, sources = {}, {}
    for path in sorted((REPO_ROOT / "models").rglob("*.sql")):
        sql = path.read_text()
        folder = path.relative_to(REPO_ROOT / "models").parent.parts
        config = {**DbtModelConfig().to_dict(omit_none=False),
                  **_folder_configs(models_tree, folder), **_config_call(sql)}
        nodes[f"model.demo.{path.stem}"] = {
            "name": path.stem, "alias": path.stem, "schema": config.get("schema") or "default",
            "unique_id": f"model.demo.{path.stem}", "resource_type": "model", "raw_code": sql,
            "config": config,
            "sources": [list(s) for s in re.findall(r"source\(\s*'(\w+)'\s*,\s*'(\w+)'\s*\)", sql)],
        }
    for path in (REPO_ROOT / "models").rglob("*.yml"):
        for declared in (yaml.safe_load(path.read_text()) or {}).get("sources") or []:
            for table in declared.get("tables") or []:
                sources[f"source.demo.{declared['name']}.{table['name']}"] = {
                    "source_name": declared["name"], "name": table["name"],
                    "meta": table.get("meta") or {},
                }
    return {"nodes": nodes, "sources": sources}


def test_every_streaming_model_of_the_demo_reads_fine():
    graph = demo_graph()
    streaming = [node for node in graph["nodes"].values()
                 if node["config"]["materialized"] in STREAMING_MATERIALIZATIONS]

    read_as = {node["name"]: read_model_config(node, graph).materialized for node in streaming}

    assert read_as["patients"] == read_as["patient_ward_history"] == "cdc_table"
    assert read_as["silver_recordings"] == read_as["device_counts"] == "streaming_table"
    assert len(read_as) == len(graph["nodes"]) - 2  # all but one table and one ephemeral model
