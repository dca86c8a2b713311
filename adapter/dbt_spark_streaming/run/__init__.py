"""One dbt invocation: the coordinator of a model's steps (model_run.py), the run's queries and
summary (streaming_run.py, summary.py), Ctrl-C (interruption.py), and serving the invocation's
queries until stopped (serving.py).

May import: serve, unit_tests, lifecycle, writes, sources, progress, delta, jvm, config
"""
