{#
  Streaming reads of a table whose rows change in place (a cdc_table, or output_mode 'update'),
  which a plain stream(ref(...)) refuses as soon as a commit updates or deletes a row.

  stream_changes(ref('m')): the table's change data feed as a stream. The first run reads the
  table as it is (every row an 'insert'), then each commit's changes once: every row with
  _change_type ('insert', 'update_preimage', 'update_postimage', 'delete'), _commit_version and
  _commit_timestamp.

  stream_appends(ref('m')): the table's rows as a stream, skipping every commit that updated or
  deleted rows (Delta's skipChangeCommits), rows such a commit inserted included. For readers
  that only want what was appended and can miss the rest.
#}
{% macro stream_changes(relation) -%}
    stream({{ relation }}) with ('readChangeFeed' = 'true')
{%- endmacro %}

{% macro stream_appends(relation) -%}
    stream({{ relation }}) with ('skipChangeCommits' = 'true')
{%- endmacro %}
