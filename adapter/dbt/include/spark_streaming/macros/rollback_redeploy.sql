{#
  dbt run-operation rollback_redeploy --args '{select: <model>}'

  Puts a streaming_table model back as it was before its last redeploy (on_query_change:
  'redeploy'): its table restored to the version before the swap (one Delta commit) and its old
  checkpoint back, within the model's rollback_window of the swap. A redeploy still being built
  is discarded instead. Models that stream from it are rebuilt on their next run. Revert the
  model's SQL too, or its next run redeploys the change again.
  `dbt-spark-streaming rollback --select <model>` runs this.
  (adapter/dbt_spark_streaming/lifecycle/redeploy.py)
#}
{% macro rollback_redeploy(select=none) %}
    {%- if execute -%}
        {%- set node = streaming_model_named(select, 'rollback_redeploy', 'can_be_redeployed') -%}
        {%- set relation = api.Relation.create(schema=node['schema'], identifier=node['alias'], type='table') -%}
        {%- set done = adapter.rollback_redeploy(node, graph, streaming_run_vars(), relation.render()) -%}
        {{ print(done) }}
    {%- endif -%}
{% endmacro %}
