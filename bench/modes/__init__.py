"""Section 5 of docs/BENCHMARKS.md, output mode update vs complete: the per-batch time of an
aggregate kept by MERGE against one rewritten whole, in two batch shapes (`python -m bench.modes`,
`make bench-modes`; also part `modes` of `python -m bench` and of `python -m bench.latency`)."""
