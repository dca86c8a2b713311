{#
  cdc_table: the model's SELECT reads a change data capture feed (rows that each insert, update
  or delete one key) as a stream, and each micro-batch is applied to a Delta table by MERGE:
  the current row per key (SCD type 1) or every version of it (SCD type 2). Semantics in
  docs/cdc.md (adapter/dbt_spark_streaming/config/cdc.py); config keys in docs/config-reference.md.
  The table writes Delta's change data feed: downstream models read its changes with
  {{ stream_changes(ref('<model>')) }}.
#}
{% materialization cdc_table, adapter='spark_streaming' %}
    {{ return(streaming_materialization()) }}
{% endmaterialization %}
