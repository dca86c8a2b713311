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


{#- What streaming_table and cdc_table run: the model's query as a stream into its table. -#}
{% macro streaming_query_materialization() %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set settings = streaming_model_config() -%}
    {%- set source_view = model['name'] ~ '__stream_src' -%}

    {{ run_hooks(pre_hooks) }}

    {#- Resolved and checked before anything is dropped or started (runtime/writes/model_query.py);
        json/csv lines the model cannot read are kept out of it, for their quarantine beside it -#}
    {%- set corrupt_lines = adapter.create_stream_view(settings, sql, source_view, should_full_refresh()) -%}

    {%- if adapter.empty_run() -%}
        {#- --empty: the query resolved against its inputs; no stream started, no checkpoint or
            existing table touched; a model never built gets its table with no rows -#}
        {%- set created = adapter.create_empty_table(settings, source_view, target_relation.render()) -%}
        {%- do store_raw_result(
            name='main', code='EMPTY', rows_affected=0,
            message='EMPTY run: query checked, no stream started, '
                ~ ('table created with no rows' if created else 'table and checkpoint untouched')
        ) -%}
    {%- else -%}
        {%- do reset_if_full_refresh(settings, target_relation) -%}

        {%- set summary = adapter.run_streaming_write(settings, source_view, target_relation.render(), corrupt_lines) -%}
        {#- History appended once through the model's SQL, the checkpoint untouched -#}
        {%- set backfilled = adapter.run_backfills(settings, sql, target_relation.render()) if settings.backfills else '' -%}
        {%- do store_raw_result(
            name='main', message=summary['message'] ~ backfilled, code=summary['code'], rows_affected=summary['input_rows']
        ) -%}
        {%- do persist_docs(target_relation, model) -%}
    {%- endif -%}

    {{ run_hooks(post_hooks) }}

    {{ return({'relations': [target_relation]}) }}
{% endmacro %}
