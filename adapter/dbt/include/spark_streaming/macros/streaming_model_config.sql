{#
  A streaming_table or copy_into model's config, read and checked whole before anything of it
  runs (adapter/dbt_spark_streaming/config/model.py, no Spark needed): output_mode, unique_key with
  'update', trigger (and a run-wide --vars '{stream_trigger: ...}'), watermark, dedupe,
  on_schema_change, partitioning, a checkpoint of its own, no key that is neither a setting of
  its materialisation nor dbt's own, and the meta.stream of every source the model reads. Every error is a Compilation Error naming the model, the setting and the values
  that are allowed. Returns the one ModelConfig the materialisation takes its settings from.
#}
{% macro streaming_model_config() %}
    {{ return(adapter.streaming_model_config(model, graph, streaming_run_vars())) }}
{% endmacro %}


{#- The run's --vars that change a streaming model's config. -#}
{% macro streaming_run_vars() %}
    {{ return({
        'stream_trigger': var('stream_trigger', none),
        'copy_into_force': var('copy_into_force', none),
    }) }}
{% endmacro %}


{#
  `dbt compile` never runs a materialisation, and `dbt run` compiles a model just before running
  it, so the check runs while the model compiles: the project's ref() and source() overrides
  call this for the model being compiled (any dbt model reads through one of them). The
  materialisations read the config again, which covers a model that reads through neither.
#}
{% macro check_streaming_model() %}
    {%- if execute and model is mapping and model.get('resource_type') == 'model' -%}
        {%- if model.get('config', {}).get('materialized') in adapter.streaming_materializations() -%}
            {%- do streaming_model_config() -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
