"""The serving loop's scheduler: runs on_new_data models again when one of their inputs commits
(dataflow.py), watches those inputs without Spark (input_watches.py), and pauses after a failure
(backoff.py). run/model_run.py hands it models; run/serving.py keeps it going.

May import: unit_tests, lifecycle, writes, sources, progress, delta, jvm, config
"""
