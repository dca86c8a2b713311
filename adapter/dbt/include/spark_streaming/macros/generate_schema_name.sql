{#
  Schemas per target, as dbt names them, except in production. A model with a custom schema
  (+schema: silver) goes to <target schema>_silver (dbt_alice_silver) in every target but a
  production one, which keeps the layer's own name (silver). A streaming model's checkpoint
  defaults to <schema>/<alias>, so two targets on one metastore share no table and no
  checkpoint. Production targets are named by var('production_targets'), default ['prod'].
  A project's own generate_schema_name still wins over this one.
#}
{% macro spark_streaming__generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- elif target.name in var('production_targets', ['prod']) -%}
        {{ custom_schema_name | trim }}
    {%- else -%}
        {{ target.schema }}_{{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
