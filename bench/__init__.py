"""Benchmarks: not tests. Each prints figures measured on this machine in this run.

Grouped by the section of docs/BENCHMARKS.md each part produces; each package renders its own
section (its doc.py or report.py):

- __main__.py (`python -m bench`, `make bench`): every part in one run; writes the whole document
  (document.py) or, with `--parts run_cost` / `cdc`, only their sections.
- recompute/: 1. Incremental vs recompute.
- overhead/: 2. Overhead, `dbt build` vs a hand-written PySpark job, and 4. Throughput per layer
  (from the same runs).
- latency/: 3. Latency, always on (`python -m bench.latency`, `make bench-latency`), and 7.
  Always-on latency before and after each change (its runs, `latency/append_commit.py`), and the
  soak (`python -m bench.latency.soak`, `make bench-soak`).
- modes/: 5. Output mode update vs complete (`python -m bench.modes`, `make bench-modes`).
- run_cost/: 6. Run cost (`make bench-run-cost`).
- cdc/: 8. CDC apply (`python -m bench.cdc`, `make bench-cdc`).
- expectations/: 9. Expectations (`python -m bench.expectations`, `make bench-expectations`).
- unit_tests/: 10. Unit tests (`python -m bench.unit_tests`, `make bench-unit-tests`).
- file_pushdown/: 11. Filter pushdown off (`python -m bench.file_pushdown`, `make bench-file-pushdown`).
- landing_listing/: 12. Listing a landing folder, with and without cleaning it up
  (`python -m bench.landing_listing`, `make bench-landing-listing`).
- delta_commit/: 13. A Delta commit to a local table, with the session's local-file settings and
  with the defaults (`python -m bench.delta_commit`, `make bench-delta-commit`).
- harness/: what they share: timing and medians, child processes and fresh lakehouses, a run's
  record and steps, foreachBatch phase clocks, the machine's description, and the document
  plumbing (tables, replacing a section in place).
"""
