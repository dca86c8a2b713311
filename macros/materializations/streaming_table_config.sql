{#
  Reads and checks a streaming_table model's config before any SQL runs. Every error names the
  model, the setting and the values that are allowed.
#}
{% macro streaming_table_config(relation) %}
    {%- set output_mode = config.get('output_mode', 'append') -%}
    {%- if output_mode not in ['append', 'complete', 'update'] -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model['name'] ~ ": output_mode '" ~ output_mode ~ "' is not supported by "
            ~ "streaming_table. Allowed values: 'append' (each input row written once), "
            ~ "'complete' (an aggregate rewritten every batch) or 'update' (changed aggregate "
            ~ "rows merged by unique_key)."
        ) }}
    {%- endif -%}
    {%- set unique_key = config.get('unique_key', none) -%}
    {%- if output_mode == 'update' and not unique_key -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model['name'] ~ ": output_mode 'update' merges each batch's changed rows "
            ~ "into the table by unique_key. Set unique_key to the columns that identify a row "
            ~ "(the GROUP BY columns, window included), e.g. unique_key=['device_id']."
        ) }}
    {%- endif -%}

    {%- set partition_by = config.get('partition_by', none) -%}
    {%- if partition_by is string -%}
        {%- set partition_by = [partition_by] -%}
    {%- endif -%}

    {%- set checkpoint = adapter.checkpoint_location(
        config.get('checkpoint_location', none), relation.schema, relation.identifier
    ) -%}
    {%- do streaming_checkpoint_must_be_own(checkpoint) -%}

    {{ return({
        'output_mode': output_mode,
        'trigger': streaming_trigger(),
        'model_trigger': streaming_trigger(run_wide=false),
        'checkpoint': checkpoint,
        'partition_by': partition_by or [],
        'tblproperties': config.get('tblproperties', {}),
        'unique_key': unique_key,
        'watermark': config.get('watermark', none),
        'dedupe': config.get('dedupe', none),
        'append_new_columns': appends_new_columns('streaming_table'),
    }) }}
{% endmacro %}


{#
  The trigger as a one-key mapping. Accepted forms, in config or in --vars '{stream_trigger: ...}'
  (the var wins, for a whole run; run_wide=false: the model's own, which the docs show beside it):
    {'available_now': true} | {'once': true} | {'processing_time': '4 seconds'}
    'available_now' | 'once' | '4 seconds'
#}
{% macro streaming_trigger(run_wide=true) %}
    {%- set configured = (var('stream_trigger', none) if run_wide else none)
        or config.get('trigger', none) or {'available_now': true} -%}
    {%- set allowed = "{'available_now': true}, {'once': true} or {'processing_time': '<n> seconds'}" -%}

    {%- if configured is string -%}
        {%- if configured in ['available_now', 'once'] -%}
            {%- set configured = {configured: true} -%}
        {%- else -%}
            {%- set configured = {'processing_time': configured} -%}
        {%- endif -%}
    {%- endif -%}

    {%- set chosen = [] -%}
    {%- if configured is mapping -%}
        {%- for kind, value in configured.items() -%}
            {%- if kind not in ['available_now', 'once', 'processing_time'] -%}
                {%- do chosen.append('unknown') -%}
            {%- elif value -%}
                {%- do chosen.append(kind) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    {%- set interval_ok = chosen != ['processing_time'] or modules.re.match(
        '^\s*\d+(\.\d+)?\s*(millisecond|second|minute|hour)s?\s*$', configured['processing_time'] | string
    ) -%}

    {%- if chosen | length != 1 or 'unknown' in chosen or not interval_ok -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model['name'] ~ ": trigger " ~ configured ~ " is not valid. Allowed: "
            ~ allowed ~ " (in the model's config, or for a whole run with "
            ~ "--vars '{stream_trigger: ...}')."
        ) }}
    {%- endif -%}
    {{ return(configured) }}
{% endmacro %}


{#
  Two streams sharing a checkpoint corrupt each other's progress, so a model whose checkpoint
  resolves to the same place as another streaming model's fails before its stream starts.
#}
{% macro streaming_checkpoint_must_be_own(checkpoint) %}
    {%- set sharing = [] -%}
    {%- for node in graph.nodes.values() -%}
        {%- if node.resource_type == 'model'
            and node.config.materialized == 'streaming_table'
            and node.unique_id != model['unique_id'] -%}
            {%- set other = adapter.checkpoint_location(
                node.config.get('checkpoint_location', none), node.schema, node.alias
            ) -%}
            {%- if other == checkpoint -%}
                {%- do sharing.append(node.name) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if sharing -%}
        {{ exceptions.raise_compiler_error(
            "Models " ~ model['name'] ~ " and " ~ sharing | join(', ') ~ " resolve to the same "
            ~ "checkpoint_location " ~ checkpoint ~ ". Each streaming model needs a checkpoint of "
            ~ "its own: remove checkpoint_location to use the default, or give each a different one."
        ) }}
    {%- endif -%}
{% endmacro %}


{#
  True when on_schema_change is 'append_new_columns'. dbt gives every model 'ignore'; an append
  into Delta refuses columns its table does not have, so 'ignore' and 'fail' both stop at a new
  column.
#}
{% macro appends_new_columns(materialization) %}
    {%- set on_schema_change = config.get('on_schema_change', none) or 'fail' -%}
    {%- if on_schema_change not in ['ignore', 'fail', 'append_new_columns'] -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model['name'] ~ ": on_schema_change '" ~ on_schema_change ~ "' is not "
            ~ "supported by " ~ materialization ~ ". Allowed: 'fail' (a new column stops the "
            ~ "write) or 'append_new_columns' (new columns are added to the Delta table)."
        ) }}
    {%- endif -%}
    {{ return(on_schema_change == 'append_new_columns') }}
{% endmacro %}
