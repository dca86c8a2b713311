{#
  dbt run-operation maintain_tables --args '{select: [<model>, ...]}'

  Compacts each streaming model's small files (Delta OPTIMIZE) and VACUUMs the files no version
  in use needs, keeping what a rollback inside the model's rollback_window or a stream that has
  not caught up still reads: what the service does while serving, for projects run by `dbt run`.
  Every streaming model, and the target's progress table, when select is empty. One model's
  failure does not stop the others.
  `dbt-spark-streaming maintain` runs this.
  (adapter/dbt_spark_streaming/lifecycle/maintenance.py)
#}
{% macro maintain_tables(select=none) %}
    {%- if execute -%}
        {%- set wanted = [select] if select is string else (select or []) -%}
        {%- for name in wanted -%}
            {%- do streaming_model_named(name, 'maintain_tables', none) -%}
        {%- endfor -%}
        {%- set models = [] -%}
        {%- for node in graph.nodes.values() | selectattr('resource_type', 'equalto', 'model') -%}
            {%- if node.config.materialized in adapter.streaming_materializations()
                  and (not wanted or node.name in wanted) -%}
                {%- set relation = api.Relation.create(schema=node.schema, identifier=node.alias, type='table') -%}
                {%- do models.append([node, relation.render()]) -%}
            {%- endif -%}
        {%- endfor -%}
        {{ print(adapter.maintain_tables(models, graph, streaming_run_vars(), not wanted)) }}
    {%- endif -%}
{% endmacro %}
