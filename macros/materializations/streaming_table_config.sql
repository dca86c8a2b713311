{#
  A streaming_table or copy_into model's config, checked in one place before anything of it runs
  (python_runners/runtime/model_config.py, no Spark needed): output_mode, unique_key with 'update',
  trigger (and a run-wide --vars '{stream_trigger: ...}'), watermark and dedupe, on_schema_change,
  and a checkpoint of its own. Every error is a Compilation Error naming the model, the setting
  and the values that are allowed. Returns the settings the materialisation uses.
#}
{% macro streaming_model_settings() %}
    {{ return(adapter.streaming_model_settings(model, graph.nodes, var('stream_trigger', none))) }}
{% endmacro %}


{#
  `dbt compile` never runs a materialisation, and `dbt run` compiles a model just before running
  it, so the check runs while the model compiles: the ref() and source() overrides call this for
  the model being compiled (any dbt model reads through one of them). The materialisations check
  again, which covers a model that reads through neither.
#}
{% macro check_streaming_model() %}
    {%- if execute and model is mapping and model.get('resource_type') == 'model' -%}
        {%- set materialized = model.get('config', {}).get('materialized') -%}
        {%- if materialized in ['streaming_table', 'copy_into'] -%}
            {%- do streaming_model_settings() -%}
        {%- endif -%}
        {%- if materialized == 'copy_into' -%}
            {%- do copy_into_source() -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
