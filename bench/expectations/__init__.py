"""Section 9 of docs/BENCHMARKS.md, expectations: five rules on a 1M-row batch against none, and
where the batch's time goes (`python -m bench.expectations`, `make bench-expectations`)."""
