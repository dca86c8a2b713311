"""`make chaos`: kill the always-on pipeline with SIGKILL again and again, then prove nothing was lost.

The pipeline runs as a user runs it (`dbt run` with a processing-time trigger, in its own process
group) while data keeps landing. Each kill takes down the whole process tree at a planned moment:
a random delay after start, or the instant a model's Delta table gets a new commit, which is when
the table holds a batch that its checkpoint has not yet recorded as done.
"""
