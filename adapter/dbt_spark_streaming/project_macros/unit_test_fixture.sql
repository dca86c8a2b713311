{#
  dbt's fixture for a unit test's given rows, with two additions for streaming models
  (docs/testing-models.md):
  - a streaming source (meta.stream) has no table to take the columns' types from: they are the
    source's declared schema;
  - rows may carry `_batch`, the micro-batch a row arrives in (a micro-batch scenario).
  Anything else is dbt's own get_fixture_sql. dbt takes this override only from the root project.
#}
{% macro get_fixture_sql(rows, column_name_to_data_types) %}
    {%- set batched = rows | selectattr('_batch', 'defined') | list | length > 0 -%}
    {%- if column_name_to_data_types or (not batched and load_relation(this) is not none) -%}
        {{ return(dbt.get_fixture_sql(rows, column_name_to_data_types)) }}
    {%- endif -%}
    {%- set types = adapter.unit_test_input_columns(this.render(), model.get('source_name'), model.name, batched) -%}
-- Fixture for {{ model.name }}
    {%- set default_row = {} -%}
    {%- for column_name, column_type in types.items() -%}
        {%- do default_row.update({column_name: (safe_cast("null", column_type) | trim)}) -%}
    {%- endfor -%}
    {%- for row in rows %}
        {%- set formatted = default_row.copy() -%}
        {%- do formatted.update(format_row(row, types)) %}
select {% for column_name, value in formatted.items() %}{{ value }} as {{ adapter.quote(column_name) }}{% if not loop.last %}, {% endif %}{% endfor %}
        {%- if not loop.last %}
union all
        {%- endif -%}
    {%- endfor -%}
    {%- if rows | length == 0 %}
select {% for column_name, value in default_row.items() %}{{ value }} as {{ adapter.quote(column_name) }}{% if not loop.last %}, {% endif %}{% endfor %} limit 0
    {%- endif -%}
{% endmacro %}
