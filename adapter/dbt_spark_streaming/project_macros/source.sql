{#
  source() for sources declared with meta.stream: the table resolves to a temp view over
  spark.readStream (for streaming_table models), over the files of each load (copy_into) or
  spark.read (any other materialisation). Other sources are dbt's own. Calling builtins.source
  keeps lineage. Like ref(), it checks the streaming config of the model being compiled
  (check_streaming_model, in the spark_streaming adapter's macros).

  dbt takes a source() override only from the root project, so this one lives here; everything
  else streaming ships with the adapter plugin.

  Nothing happens at render time but naming the view (and checks that need no Spark): `dbt
  compile`, `dbt ls` and `dbt docs generate` start no Spark for a source, list no landing folder
  and infer no schema. The adapter registers the view when SQL that names it runs: a streaming
  model's query (as its run starts), any statement dbt executes (add_query), a copy_into load.
#}
{% macro source(source_name, table_name) %}
    {%- set relation = builtins.source(source_name, table_name) -%}
    {%- do check_streaming_model() -%}
    {%- if execute and model is mapping and model.get('resource_type') == 'unit_test' -%}
        {#- a unit test: the input is its given rows (dbt's fixture), read as a batch or, in a
            micro-batch scenario, as a stream of them (runtime/unit_tests/model_tests.py) -#}
        {{ return(relation) }}
    {%- elif execute -%}
        {%- set stream_meta = adapter.stream_source_meta(graph, source_name, table_name) -%}
        {%- set materialized = model.get('config', {}).get('materialized') if model is mapping else none -%}
        {%- if stream_meta and materialized == 'copy_into' -%}
            {#- copy_into registers this view over each load's files when it runs -#}
            {%- set view_name = adapter.copy_source_view(model['name'], source_name ~ '.' ~ table_name) -%}
            {{ return(api.Relation.create(identifier=view_name, type='view')) }}
        {%- elif stream_meta -%}
            {%- set view_name = adapter.source_view(
                source_name ~ '.' ~ table_name, stream_meta, materialized in adapter.streaming_materializations('streams')
            ) -%}
            {{ return(api.Relation.create(identifier=view_name, type='view')) }}
        {%- endif -%}
    {%- endif -%}
    {{ return(relation) }}
{% endmacro %}
