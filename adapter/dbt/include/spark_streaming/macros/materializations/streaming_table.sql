{#
  streaming_table: the model's SELECT runs as a Spark Structured Streaming query that writes into
  a Delta table, each model with its own checkpoint. Every run processes only the input that
  arrived since the last one.
  Its config keys, what each does and its default: docs/config-reference.md (checked once, before
  anything runs: adapter/dbt_spark_streaming/config/model.py).
#}
{% materialization streaming_table, adapter='spark_streaming' %}
    {{ return(streaming_materialization()) }}
{% endmaterialization %}
