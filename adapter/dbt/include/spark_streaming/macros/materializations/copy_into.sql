{#
  copy_into: COPY INTO for a folder of files. Each run loads, through the model's SELECT, the
  files of its one file source that it has not loaded before, and appends them to a Delta table.
  Which files were loaded is kept in a Delta load log; a run interrupted at any moment is
  finished by the next one without loading a file twice (adapter/dbt_spark_streaming/writes/copy_into.py).
  Config keys: docs/config-reference.md.
#}
{% materialization copy_into, adapter='spark_streaming' %}
    {{ return(streaming_materialization()) }}
{% endmaterialization %}
