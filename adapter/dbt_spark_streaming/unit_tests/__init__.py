"""dbt unit tests of streaming models: a test's given rows as the model's inputs, run as one batch
or as a micro-batch scenario, and the rows it wrote.

May import: lifecycle, writes, sources, progress, delta, jvm, config
"""
