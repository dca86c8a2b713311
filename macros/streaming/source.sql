{#
  source() for sources declared with meta.stream: the table resolves to a temp view that the
  Python runner registers over spark.readStream (for streaming_table models) or spark.read (for
  any other materialisation). Other sources are dbt's own. Calling builtins.source keeps lineage.
#}
{% macro source(source_name, table_name) %}
    {%- set relation = builtins.source(source_name, table_name) -%}
    {%- if execute -%}
        {%- set stream_meta = stream_source_meta(source_name, table_name) -%}
        {%- if stream_meta -%}
            {%- set streaming = model is mapping and model.get('config', {}).get('materialized') == 'streaming_table' -%}
            {%- set view_name = adapter.register_source_view(
                source_name ~ '.' ~ table_name, stream_meta, streaming
            ) -%}
            {{ return(api.Relation.create(identifier=view_name, type='view')) }}
        {%- endif -%}
    {%- endif -%}
    {{ return(relation) }}
{% endmacro %}


{% macro stream_source_meta(source_name, table_name) %}
    {%- for node in graph.sources.values() -%}
        {%- if node.source_name == source_name and node.name == table_name -%}
            {%- set meta = node.get('config', {}).get('meta', {}) or {} -%}
            {{ return(node.meta.get('stream') or meta.get('stream')) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(none) }}
{% endmacro %}
