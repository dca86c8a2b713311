"""A model's settings, read and checked without Spark: by dbt's parse, `make lint` and the unit
tier.

May import: nothing
"""
