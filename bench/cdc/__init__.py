"""Section 8 of docs/BENCHMARKS.md, CDC apply: a cdc_table's MERGE per batch, SCD1 and SCD2, and
where a batch's time goes (`python -m bench.cdc`, `make bench-cdc`, also part `cdc` of
`python -m bench`)."""
