"""The project that wrote tests/fixtures/spark41_checkpoints with Spark 4.1.4 (its make.py), and
that tests/session/test_source_evolution.py runs on them again."""

SCHEMA = "upgrade41"
MODELS = {
    "silver": "select id, kind from stream({{ source('upgrade41', 'bronze') }})",
    "gold": ("{{ config(output_mode='complete') }}\n"
             "select kind, count(*) as n from stream({{ ref('silver') }}) group by kind"),
}
SOURCES = f"""
version: 2
sources:
  - name: upgrade41
    schema: {SCHEMA}
    tables:
      - name: bronze
"""
