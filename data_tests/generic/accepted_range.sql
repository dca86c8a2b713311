{#
  Fails for every row whose value is null or lies outside [min_value, max_value] (either bound
  optional).
#}
{% test accepted_range(model, column_name, min_value=none, max_value=none) %}

    select {{ column_name }}
    from {{ model }}
    where
        {{ column_name }} is null
        {%- if min_value is not none %}
            or {{ column_name }} < {{ min_value }}
        {%- endif %}
        {%- if max_value is not none %}
            or {{ column_name }} > {{ max_value }}
        {%- endif %}

{% endtest %}
