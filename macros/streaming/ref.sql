{#
  ref() as dbt's own (lineage, versions, packages), plus the streaming config check of the model
  being compiled (streaming_table_config.sql).
#}
{% macro ref() %}
    {%- set relation = builtins.ref(*varargs, **kwargs) -%}
    {%- do check_streaming_model() -%}
    {{ return(relation) }}
{% endmacro %}
