{#
  on-run-end hook: queries started with a processing_time trigger keep running after the last
  model, until Ctrl-C or SIGTERM stops each of them after its current batch.
#}
{% macro serve_streaming_queries() %}
    {%- if execute and flags.WHICH in ['run', 'build'] -%}
        {%- do adapter.serve_streams() -%}
    {%- endif -%}
{% endmacro %}
