{#
  cdc_table: the model's SELECT reads a change data capture feed (rows that each insert, update
  or delete one key) as a stream, and each micro-batch is applied to a Delta table by MERGE:
  the current row per key (SCD type 1) or every version of it (SCD type 2). Settings after
  Lakeflow's AUTO CDC; semantics in docs/cdc.md (adapter/dbt_spark_streaming/config/cdc.py).

  Config (read and checked once, before anything runs):
    keys                 column or columns identifying a row (required)
    sequence_by          column, or list of columns compared in order, ordering a key's changes (required)
    apply_as_deletes     SQL condition marking a delete, e.g. "op = 'D'"
    apply_as_truncates   SQL condition marking a truncate of the whole table (scd1)
    except_columns       feed columns not stored, e.g. ['op']
    ignore_null_updates  true: a null in an update keeps the stored value
    stored_as            'scd1' (default) or 'scd2'
    track_history_columns / track_history_except_columns   scd2: which changes make a version
    start_at_column / end_at_column   scd2 validity columns (default __start_at / __end_at)
    tombstone_retention  how long a delete is remembered against late changes (default '2 days')
    trigger, checkpoint_location, partition_by, tblproperties, watermark, dedupe,
    expectations, quarantine_table: as streaming_table (expectations check the feed's rows)
  Any other key (but dbt's own configs) is refused, naming the nearest valid one.
  The table writes Delta's change data feed: downstream models read its changes with
  {{ stream_changes(ref('<model>')) }}.
#}
{% materialization cdc_table, adapter='spark_streaming' %}
    {{ return(streaming_query_materialization()) }}
{% endmaterialization %}
