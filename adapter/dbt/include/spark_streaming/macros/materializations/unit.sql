{#
  dbt unit tests on this adapter: the model's SQL as one batch over its given rows (its
  stream(...) reads read the fixtures), or, when the rows carry _batch, a micro-batch scenario
  through Spark's streaming engine (adapter/dbt_spark_streaming/unit_tests/model_tests.py). The rows compared
  with the expected ones come from a temp view; dbt's own macros build the expected rows and the
  comparison, so its diff is shown on a failure. docs/testing-models.md.
#}
{%- materialization unit, adapter='spark_streaming' -%}
    {%- set expected_rows = config.get('expected_rows') -%}
    {%- set expected_sql = config.get('expected_sql') -%}
    {%- set actual = adapter.unit_test_actual_rows(model, graph, sql, expected_rows) -%}
    {%- set compared = expected_rows[0].keys() if expected_rows else actual['columns'].keys() -%}
    {%- set compared_quoted = [] -%}
    {%- for column in compared -%}
        {%- do compared_quoted.append(actual['quoted'].get(column | lower, adapter.quote(column))) -%}
    {%- endfor -%}
    {%- if not expected_sql -%}
        {%- set expected_sql = get_expected_sql(expected_rows, actual['columns'], actual['quoted']) -%}
    {%- endif -%}
    {%- call statement('main', fetch_result=True) -%}
        {{ get_unit_test_sql('select * from ' ~ actual['view'], expected_sql, compared_quoted) }}
    {%- endcall -%}
    {%- do adapter.drop_unit_test_views(model['name']) -%}
    {{ return({'relations': []}) }}
{%- endmaterialization -%}
