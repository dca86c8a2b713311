{#
  `dbt show --select <model>` runs the model's compiled SQL with a limit. A streaming model's SQL
  reads streams, which only a streaming write can run, so for streaming_table and copy_into
  models `dbt show` shows the rows of the model's table instead. Replaces dbt's own get_show_sql
  (which is not dispatched); other nodes get what dbt's does.
#}
{% macro get_show_sql(compiled_code, sql_header, limit) %}
    {%- set materialized = model.get('config', {}).get('materialized') if model is mapping else none -%}
    {%- if materialized in ['streaming_table', 'copy_into'] and model.get('resource_type') == 'model' -%}
        {%- if load_relation(this) is none -%}
            {{ exceptions.raise_compiler_error(
                "Model " ~ model['name'] ~ " is a " ~ materialized ~ " and has no table yet: "
                ~ "`dbt show` shows the rows of its table. Build it first with "
                ~ "`dbt run --select +" ~ model['name'] ~ "`."
            ) }}
        {%- endif -%}
        {%- set compiled_code = 'select * from ' ~ this.render() -%}
    {%- endif -%}
    {%- if sql_header is not none -%}
    {{ sql_header }}
    {%- endif %}
    {{ get_limit_subquery_sql(compiled_code, limit) }}
{% endmacro %}
