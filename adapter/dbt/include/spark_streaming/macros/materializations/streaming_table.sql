{#
  streaming_table: the model's SELECT runs as a Spark Structured Streaming query that writes into
  a Delta table, each model with its own checkpoint. Every run processes only the input that
  arrived since the last one.

  Config (read and checked once, before anything runs: adapter/dbt_spark_streaming/config/model.py):
    output_mode          'append' (default), 'complete', or 'update' (with unique_key: each
                         batch's changed rows MERGEd into the table)
    unique_key           column or list of columns identifying a row (update mode)
    watermark            {column: <event time>, delay: '<n> minutes'}, or a list of them, each
                         on the streaming inputs that have its column
    dedupe               {keys: [...], within_watermark: true} drops rows delivered twice
    trigger              {'available_now': true} (default), {'once': true},
                         {'processing_time': '<n> seconds'} or {'on_new_data': true} (served:
                         run again each time an input commits); run-wide: --vars '{stream_trigger: ...}'
    target_lag           '<n> seconds': how far behind its inputs a served model may fall;
                         measured, shown by `service status` and _stream_progress, said when missed
    checkpoint_location  default <checkpoint root>/<schema>/<model>
    partition_by         column or list of columns
    tblproperties        Delta table properties
    on_schema_change     'fail' (default) or 'append_new_columns' (new columns join the table)
    on_query_change      'apply_to_new_rows' (default: said in the output and the table's
                         history), 'fail' (stop, saying what changed) or 'redeploy' (the new
                         version built beside the table from the start of its inputs, swapped
                         in once caught up; streaming_table only): docs/changing-models.md
    rollback_window      how long a redeploy keeps the old version to roll back to, default
                         '7 days' (dbt-spark-streaming rollback --select <model>)
    expectations         [{name, expression, action: warn|drop|quarantine|fail}, ...]: rules
                         checked on every row as it is written (docs/expectations.md)
    quarantine_table     where quarantined rows go (default <model>__quarantine)
    backfills            [{name, path | table, format, options}, ...]: historical data run through
                         the model's SQL and appended once, checkpoint untouched (append mode only)
  A model's YAML `contract: {enforced: true}` holds too (docs/contracts.md). Any other key
  (but dbt's own configs) is refused, naming the nearest valid one (runtime/config/settings.py).
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
