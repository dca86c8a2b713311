{#
  streaming_table: the model's SELECT runs as a Spark Structured Streaming query that writes into
  a Delta table, each model with its own checkpoint. Every run processes only the input that
  arrived since the last one.
  Its config keys, what each does and its default: docs/config-reference.md (checked once, before
  anything runs: adapter/dbt_spark_streaming/config/model.py).
#}
{% materialization streaming_table, adapter='spark_streaming' %}
    {{ return(streaming_query_materialization()) }}
{% endmaterialization %}


{#- What streaming_table and cdc_table run: the model's query as a stream into its table
    (adapter/dbt_spark_streaming/run/materialize.py: --empty, nothing new, a checkpoint reset, a
    full refresh once the query resolved, the run, backfills). -#}
{% macro streaming_query_materialization() %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set settings = streaming_model_config() -%}

    {{ run_hooks(pre_hooks) }}

    {%- set result = adapter.materialize_streaming_model(
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
