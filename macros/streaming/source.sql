{#
  source() for sources declared with meta.stream: the table resolves to a temp view over
  spark.readStream (for streaming_table models), over the files of each load (copy_into) or
  spark.read (any other materialisation). Other sources are dbt's own. Calling builtins.source
  keeps lineage. Like ref(), it checks the streaming config of the model being compiled
  (streaming_table_config.sql).

  Nothing happens at render time but naming the view (and checks that need no Spark): `dbt
  compile`, `dbt ls` and `dbt docs generate` start no Spark for a source, list no landing folder
  and infer no schema. The adapter registers the view when SQL that names it runs: a streaming
  model's query (create_stream_view), any statement dbt executes (add_query), a copy_into load.
#}
{% macro source(source_name, table_name) %}
    {%- set relation = builtins.source(source_name, table_name) -%}
    {%- do check_streaming_model() -%}
    {%- if execute -%}
        {%- set stream_meta = stream_source_meta(source_name, table_name) -%}
        {%- if stream_meta and model is mapping and model.get('config', {}).get('materialized') == 'copy_into' -%}
            {#- copy_into registers this view over each load's files when it runs -#}
            {%- set view_name = adapter.copy_source_view(model['name'], source_name ~ '.' ~ table_name) -%}
            {{ return(api.Relation.create(identifier=view_name, type='view')) }}
        {%- elif stream_meta -%}
            {%- set streaming = model is mapping and model.get('config', {}).get('materialized') == 'streaming_table' -%}
            {%- if stream_meta.get('archive_to') -%}
                {%- do archived_source_has_one_reader(relation, source_name, table_name) -%}
            {%- endif -%}
            {%- set view_name = adapter.source_view(
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


{#
  A source with archive_to has its files moved away once its reader has processed them, so a
  second streaming reader would miss them: refuse that before anything runs.
#}
{% macro archived_source_has_one_reader(relation, source_name, table_name) %}
    {%- set readers = [] -%}
    {%- for node in graph.nodes.values() -%}
        {%- if node.resource_type == 'model' and node.config.materialized == 'streaming_table' -%}
            {%- for source in node.sources -%}
                {%- if source[0] == source_name and source[1] == table_name -%}
                    {%- do readers.append(node.name) -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if readers | length > 1 -%}
        {{ exceptions.raise_compiler_error(
            "Source " ~ source_name ~ "." ~ table_name ~ " has archive_to set and is read as a "
            ~ "stream by " ~ readers | join(', ') ~ ". The first to process a file moves it away "
            ~ "from the others. Let one model ingest it (a bronze model) and the others read that "
            ~ "model with stream(ref(...)), or remove archive_to."
        ) }}
    {%- endif -%}
{% endmacro %}
