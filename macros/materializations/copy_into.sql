{#
  copy_into: COPY INTO for a folder of files. Each run loads, through the model's SELECT, the
  files of its one file source that it has not loaded before, and appends them to a Delta table.
  Which files were loaded is kept in a Delta load log; a run interrupted at any moment is
  finished by the next one without loading a file twice (python_runners/runtime/writes/copy_into.py).

  Config:
    force            true reloads every file in the folder once (also for a run:
                     --vars '{copy_into_force: true}'); loaded rows are appended again
    load_log_location  default <checkpoint root>/<schema>/<model>; query it with
                     select * from delta.`<location>`
    partition_by, tblproperties, on_schema_change ('fail' or 'append_new_columns')
#}
{% materialization copy_into, adapter='spark' %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set settings = streaming_model_settings() -%}
    {%- set source = copy_into_source() -%}
    {%- set load_log = adapter.checkpoint_location(
        config.get('load_log_location', none), target_relation.schema, target_relation.identifier
    ) -%}
    {%- set force = config.get('force', var('copy_into_force', false)) -%}

    {{ run_hooks(pre_hooks) }}

    {%- if adapter.empty_run() -%}
        {#- --empty: loading no rows would still mark the files loaded; load nothing, log nothing -#}
        {%- do store_raw_result(
            name='main', code='EMPTY', rows_affected=0,
            message='EMPTY run: no files loaded (table and load log untouched)'
        ) -%}
    {%- else -%}
        {%- if should_full_refresh() -%}
            {%- do adapter.reset_streaming_table(target_relation.render(), load_log) -%}
        {%- endif -%}

        {%- set summary = adapter.run_copy_into(
            model['name'],
            sql,
            source.name,
            source.meta,
            target_relation.render(),
            load_log,
            force in [true, 'true', 'True'],
            settings.append_new_columns,
            settings.partition_by,
            settings.tblproperties
        ) -%}
        {%- do store_raw_result(
            name='main', message=summary['message'], code='COPIED', rows_affected=summary['rows_loaded']
        ) -%}

        {% do persist_docs(target_relation, model) %}
    {%- endif -%}

    {{ run_hooks(post_hooks) }}

    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{# The one file source (meta.stream) a copy_into model selects from. #}
{% macro copy_into_source() %}
    {%- set found = [] -%}
    {%- for source_name, table_name in model['sources'] -%}
        {%- set meta = stream_source_meta(source_name, table_name) -%}
        {%- if meta -%}
            {%- do found.append({'name': source_name ~ '.' ~ table_name, 'meta': meta}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if found | length != 1 -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model['name'] ~ ": copy_into loads the files of one source declared with "
            ~ "meta.stream (format json, csv or parquet); this model selects from "
            ~ (found | map(attribute='name') | join(', ') if found else 'none') ~ ". Select from "
            ~ "exactly one, e.g. {{ source('landing', 'recordings') }}; join other tables with ref()."
        ) }}
    {%- endif -%}
    {{ return(found[0]) }}
{% endmacro %}
