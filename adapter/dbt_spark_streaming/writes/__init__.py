"""The queries that write a model's table: its query resolved and checked, appends, MERGEs,
COPY INTO, backfills; cdc in cdc/. They start queries and know nothing of the run, redeploys
or Ctrl-C.

May import: sources, progress, delta, jvm, config
"""
