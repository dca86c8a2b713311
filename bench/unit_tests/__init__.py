"""Section 10 of docs/BENCHMARKS.md: the wall time of the demo's dbt unit tests once the session is
up (`python -m bench.unit_tests`, `make bench-unit-tests`)."""
