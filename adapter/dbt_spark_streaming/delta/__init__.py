"""Delta tables: their log and properties, the catalog dbt docs shows, constraints.

May import: jvm, config
"""
