{#
  Layers are schemas: models/bronze -> bronze, models/silver -> silver, models/gold -> gold.
  A model without a custom schema goes to the target's schema.
#}
{% macro generate_schema_name(custom_schema_name, node) %}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{% endmacro %}
