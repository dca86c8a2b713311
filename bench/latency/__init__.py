"""Sections 3 and 7 of docs/BENCHMARKS.md: always-on latency, landing to visible in gold, with its
per-hop and per-phase breakdown (`python -m bench.latency`, `make bench-latency`, also part
`latency` of `python -m bench`), the runs before and after each change (section 7, from the same
command and `python -m bench.latency.append_commit`), and the half-hour soak
(`python -m bench.latency.soak`, `make bench-soak`)."""
