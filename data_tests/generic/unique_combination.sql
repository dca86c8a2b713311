{#
  Fails for every combination of the columns that more than one row holds (a key of several
  columns, e.g. an scd2 table's key and __start_at).
#}
{% test unique_combination(model, columns) %}

    select {{ columns | join(', ') }}, count(*) as rows_holding_it
    from {{ model }}
    group by {{ columns | join(', ') }}
    having count(*) > 1

{% endtest %}
