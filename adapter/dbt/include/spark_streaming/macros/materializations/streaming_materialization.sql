{#-
  What streaming_table, cdc_table and copy_into run: the model's config read and checked whole
  before anything runs, its hooks, and one adapter call that does the rest
  (adapter/dbt_spark_streaming/run/materialize.py: --empty, nothing new, a checkpoint reset, a full
  refresh once the query resolved, the stream or the load, backfills). --empty stores what it
  checked and persists no docs.
-#}
{% macro streaming_materialization() %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set settings = streaming_model_config() -%}

    {{ run_hooks(pre_hooks) }}

    {%- set result = adapter.materialize(
        settings, sql, target_relation.render(), should_full_refresh(), model, graph, selected_resources
    ) -%}
    {%- do store_raw_result(
        name='main', message=result['message'], code=result['code'], rows_affected=result['rows_affected']
    ) -%}
    {%- if result['code'] != 'EMPTY' -%}
        {%- do persist_docs(target_relation, model) -%}
    {%- endif -%}

    {{ run_hooks(post_hooks) }}

    {{ return({'relations': [target_relation]}) }}
{% endmacro %}
