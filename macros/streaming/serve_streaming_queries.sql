{#
  on-run-end hook: queries started with a processing_time trigger keep running after the last
  model, until Ctrl-C or SIGTERM stops each of them after its current batch. If any node of the
  run failed, the queries are stopped instead and the run ends with its errors.
#}
{% macro serve_streaming_queries() %}
    {%- if execute and flags.WHICH in ['run', 'build'] -%}
        {%- set failed = results | selectattr('status', 'in', ['error', 'fail']) | list -%}
        {%- if failed -%}
            {%- do adapter.stop_streams() -%}
        {%- else -%}
            {%- do adapter.serve_streams() -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
