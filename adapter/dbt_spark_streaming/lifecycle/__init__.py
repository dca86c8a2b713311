"""What happens to a model's table and checkpoint between runs: full refresh, redeploy and rollback,
query changes, whether a model has anything new to run; checkpoint reset in reset/.

May import: writes, sources, progress, delta, jvm, config
"""
