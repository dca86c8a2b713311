{#
  `dbt show --select <model>` runs the model's compiled SQL with a limit. A streaming model's SQL
  reads streams, which only a streaming write can run, so for streaming_table and copy_into
  models `dbt show` shows the rows of the model's table instead. dbt's get_show_sql is not
  dispatched, but the limit it wraps the SQL in is (get_limit_sql): this is that, for the
  spark_streaming adapter; other nodes get dbt's own.
#}
{% macro spark_streaming__get_limit_sql(sql, limit) %}
    {%- set materialized = model.get('config', {}).get('materialized') if model is mapping else none -%}
    {%- if materialized in adapter.streaming_materializations() and model.get('resource_type') == 'model' -%}
        {%- if load_relation(this) is none -%}
            {{ exceptions.raise_compiler_error(
                "Model " ~ model['name'] ~ " is a " ~ materialized ~ " and has no table yet: "
                ~ "`dbt show` shows the rows of its table. Build it first with "
                ~ "`dbt run --select +" ~ model['name'] ~ "`."
            ) }}
        {%- endif -%}
        {%- set sql = 'select * from ' ~ this.render() -%}
    {%- endif -%}
    {{ default__get_limit_sql(sql, limit) }}
{% endmacro %}
