{#
  dbt run-operation reset_checkpoint --args '{select: <model>, from_now: true}'

  Deletes one streaming model's checkpoint and keeps its table with all its rows; its next
  `dbt run` reads its inputs from the point given here instead of from the beginning (for a lost
  or corrupted checkpoint, or an input that was replaced). Exactly one of:
    from_now: true         only input that arrives after the reset
    from_version: N        the first version of its one Delta input to read (Delta's startingVersion)
    from_timestamp: 'T'    input from T on ('2026-01-31 12:00:00', UTC unless a zone is given):
                           Delta commits, Kafka records, files modified at or after T
    from_offsets: '{...}'  Kafka startingOffsets JSON
  `dbt-spark-streaming reset-checkpoint --select <model> --from-now` runs this.
  (adapter/dbt_spark_streaming/lifecycle/reset/checkpoint_reset.py)
#}
{% macro reset_checkpoint(select=none, from_now=none, from_version=none, from_timestamp=none, from_offsets=none) %}
    {%- if execute -%}
        {%- set node = streaming_model_named(select, 'reset_checkpoint') -%}
        {%- set relation = api.Relation.create(schema=node['schema'], identifier=node['alias'], type='table') -%}
        {%- set done = adapter.reset_checkpoint(node, graph, streaming_run_vars(), {
            'from_now': from_now, 'from_version': from_version,
            'from_timestamp': from_timestamp, 'from_offsets': from_offsets,
        }, relation.render()) -%}
        {{ print(done) }}
    {%- endif -%}
{% endmacro %}


{#- The model named `select` in dbt's graph, or an error listing the streaming models. -#}
{% macro streaming_model_named(select, operation, having='can_be_reset') %}
    {%- set models = graph.nodes.values() | selectattr('resource_type', 'equalto', 'model') | list -%}
    {%- set found = models | selectattr('name', 'equalto', select) | list -%}
    {%- if not select or not found -%}
        {%- set streaming = models
            | selectattr('config.materialized', 'in', adapter.streaming_materializations(having))
            | map(attribute='name') | sort | join(', ') -%}
        {{ exceptions.raise_compiler_error(
            operation ~ ": " ~ ("no model named " ~ select if select else "no model given")
            ~ " in this project. Give select: <model>, one of its streaming models: "
            ~ (streaming or 'none') ~ "."
        ) }}
    {%- endif -%}
    {{ return(found[0]) }}
{% endmacro %}
