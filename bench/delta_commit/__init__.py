"""What a Delta commit to a local table costs with the session's local-file settings and with
Hadoop's and Delta's defaults: `python -m bench.delta_commit`."""
