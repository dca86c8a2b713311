"""What every part of the benchmarks shares: timing, fresh processes and lakehouses, phases, the
machine's description and the writing of docs/BENCHMARKS.md.

- child_process: a step in a process of its own, timed from outside; A B A B pairs of them.
- fresh_lakehouse: the benchmarks' own lakehouses under .lakehouse/bench/, and a session on one.
- run: a benchmark run's record (when, command, load), its timed steps and its closing line.
- stats: medians, percentiles, size labels.
- catch_up, rows_read: one availableNow catch-up of a streaming write, timed from its progress.
- phases: where a foreachBatch call's time goes, timed around the runtime's own functions.
- dbt_timing: dbt's own timings of the nodes it ran.
- tables: checks on the tables a benchmark wrote (exceptAll both ways).
- machine: the machine, the versions and the code measured.
- doc: markdown tables and the sections of docs/BENCHMARKS.md.
"""
