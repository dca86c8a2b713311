"""Section 6 of docs/BENCHMARKS.md, run cost: a no-op `dbt run` against a bare session start, and
sections 1's and 2's figures held against their targets (part `run_cost` of `python -m bench`,
`make bench-run-cost`)."""
