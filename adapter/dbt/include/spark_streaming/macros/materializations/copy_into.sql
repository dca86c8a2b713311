{#
  copy_into: COPY INTO for a folder of files. Each run loads, through the model's SELECT, the
  files of its one file source that it has not loaded before, and appends them to a Delta table.
  Which files were loaded is kept in a Delta load log; a run interrupted at any moment is
  finished by the next one without loading a file twice (adapter/dbt_spark_streaming/writes/copy_into.py).
  Config keys: docs/config-reference.md.
#}
{% materialization copy_into, adapter='spark_streaming' %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set settings = streaming_model_config() -%}

    {{ run_hooks(pre_hooks) }}

    {#- --empty loads nothing and logs nothing: loading no rows would still mark the files loaded -#}
    {%- set result = adapter.materialize_copy_into(
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
{% endmaterialization %}
