"""Section 1 of docs/BENCHMARKS.md, incremental vs recompute: one pipeline as streaming tables, as
dbt-spark `table` and as dbt-spark `incremental`, timed after 1% new events (part `recompute` of
`python -m bench`; incremental_vs_recompute.py runs one history size in a process of its own)."""
