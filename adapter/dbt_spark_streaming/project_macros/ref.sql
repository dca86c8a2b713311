{#
  ref() as dbt's own (lineage, versions, packages), plus the streaming config check of the model
  being compiled (check_streaming_model, in the spark_streaming adapter's macros). dbt takes a
  ref() override only from the root project, so it lives here.
#}
{% macro ref() %}
    {%- set relation = builtins.ref(*varargs, **kwargs) -%}
    {%- do check_streaming_model() -%}
    {{ return(relation) }}
{% endmacro %}
