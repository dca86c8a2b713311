"""Benchmarks: not tests. Each prints figures measured on this machine in this run."""
