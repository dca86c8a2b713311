{#
  on-run-end hook: a summary per streaming model and the run's batches into the progress table;
  then queries started with a processing_time trigger keep running after the last model, until
  Ctrl-C or SIGTERM stops each of them after its current batch (a failed query is restarted with
  backoff). If any node of the run failed, the queries are stopped instead and the run ends with
  its errors.
#}
{% macro serve_streaming_queries() %}
    {%- if execute and flags.WHICH in ['run', 'build'] -%}
        {%- set failed = results | selectattr('status', 'in', ['error', 'fail']) | list -%}
        {%- if failed -%}
            {%- do adapter.stop_streams() -%}
        {%- endif -%}
        {%- do adapter.finish_streaming_run() -%}
        {%- if not failed -%}
            {%- do adapter.serve_streams() -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
