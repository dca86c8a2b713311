"""Sections 2 and 4 of docs/BENCHMARKS.md: the demo's recordings path through `dbt build` vs the same
streaming writes hand-written in PySpark (overhead), and the rows per second each streaming write
read in those runs (throughput per layer); part `overhead` of `python -m bench`."""
