{#
  copy_into: COPY INTO for a folder of files. Each run loads, through the model's SELECT, the
  files of its one file source that it has not loaded before, and appends them to a Delta table.
  Which files were loaded is kept in a Delta load log; a run interrupted at any moment is
  finished by the next one without loading a file twice (adapter/dbt_spark_streaming/writes/copy_into.py).

  Config (read and checked once, before anything runs: adapter/dbt_spark_streaming/config/model.py):
    force            true reloads every file in the folder once (also for a run:
                     --vars '{copy_into_force: true}'); loaded rows are appended again
    load_log_location  default <checkpoint root>/<schema>/<model>; query it with
                     select * from delta.`<location>`
    partition_by, tblproperties, on_schema_change ('fail' or 'append_new_columns')
    expectations, quarantine_table  rules checked on each loaded row (docs/expectations.md)
  Any other key (but dbt's own configs) is refused, naming the nearest valid one.
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
