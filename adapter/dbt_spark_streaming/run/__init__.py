"""One dbt invocation: its state (invocation.py), each materialisation one call (materialize.py),
the steps of a model's run in order (model_run.py), the run's queries and summary
(streaming_run.py, summary.py), Ctrl-C (interruption.py), and serving the invocation's queries
until stopped (serving.py).

May import: serve, driver, unit_tests, lifecycle, writes, sources, progress, delta, jvm, config
"""
