"""Section 11 of docs/BENCHMARKS.md: what streaming json and csv files costs with Spark's filter
pushdown off, so that "rows in" counts every line read (`python -m bench.file_pushdown`,
`make bench-file-pushdown`)."""
